/** Debian's Chromium driven by playwright-core (no browser download): the executable, or null when none is installed. */
import { existsSync } from 'node:fs';
import { chromium, type Page } from 'playwright-core';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => typeof p === 'string' && p !== '');

export function chromiumPath(): string | null {
  return CANDIDATES.find((path) => existsSync(path)) ?? null;
}

/**
 * A headless Chromium page at `url` with the given viewport, closed after the (sub)test; null, with the test marked
 * skipped and why, where no Chromium is installed.
 */
export async function chromiumPage(t: { skip(message: string): void; after(fn: () => Promise<void>): void }, url: string, viewport: { width: number; height: number }): Promise<Page | null> {
  const executablePath = chromiumPath();
  if (!executablePath) {
    t.skip('no Chromium on this machine (apt-get install chromium, or set CHROMIUM_PATH)');
    return null;
  }
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--headless=new'] });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport });
  await page.goto(url);
  return page;
}
