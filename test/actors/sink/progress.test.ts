import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BootstrapProgress } from '../../../actors/sink/progress.js';
import type { Logger, LogFields } from '../../../runtime/log.js';

function recorder(): { log: Logger; lines: Array<{ message: string; fields: LogFields }> } {
  const lines: Array<{ message: string; fields: LogFields }> = [];
  const log: Logger = {
    debug: () => undefined, warn: () => undefined, error: () => undefined,
    info: (message, fields = {}) => lines.push({ message, fields }),
    child: () => log,
  };
  return { log, lines };
}

test('bootstrap progress: rows, rows/s and ETA in a log line every interval, and one line redrawn on a terminal', () => {
  let now = 1_000_000;
  const { log, lines } = recorder();
  const drawn: string[] = [];
  const progress = new BootstrapProgress({ log, processor: 'erc20', collection: 'balances', total: 100_000, intervalMs: 1000, tty: { write: (text) => drawn.push(text) }, now: () => now });
  now += 500;
  progress.add(10_000);
  assert.equal(lines.length, 0, 'nothing before the interval');
  now += 500;
  progress.add(15_000);
  assert.deepEqual(lines[0], { message: 'bootstrap progress', fields: { processor: 'erc20', collection: 'balances', rows: 25_000, total: 100_000, rowsPerSecond: 25_000, etaSeconds: 3 } });
  assert.equal(drawn[0], '\rbootstrap erc20/balances: 25,000 of 100,000 rows (25.0%), 25,000 rows/s, ETA 3 s\u001b[K');
  now += 3000;
  progress.add(75_000);
  const done = progress.finish();
  assert.deepEqual(done, { rows: 100_000, total: 100_000, rowsPerSecond: 25_000, etaSeconds: 0 });
  assert.equal(lines.at(-1)!.message, 'bootstrap copied');
  assert.ok(drawn.at(-1)!.endsWith('\n'), 'the terminal line is closed');
});
