/** Debian's Chromium driven by playwright-core (no browser download): the executable, or null when none is installed. */
import { existsSync } from 'node:fs';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => typeof p === 'string' && p !== '');

export function chromiumPath(): string | null {
  return CANDIDATES.find((path) => existsSync(path)) ?? null;
}
