/**
 * A node:test reporter beside the spec reporter (test/run.ts adds it): it sums the durations of each
 * file's top-level tests and, when the run ends, writes one `seconds<TAB>file` line per file, slowest
 * first, so the run can name what makes the suite long.
 */
import type { TestEvent } from 'node:test/reporters';

export default async function* fileTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const seconds = new Map<string, number>();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    const file = (data as { file?: string }).file;
    if (data.nesting !== 0 || file === undefined) continue;
    seconds.set(file, (seconds.get(file) ?? 0) + data.details.duration_ms / 1000);
  }
  for (const [file, total] of [...seconds].sort((a, b) => b[1] - a[1])) yield `${total.toFixed(1)}\t${file}\n`;
}
