import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DUPLICATE_WINDOW_MS, stopSignalHandler } from '../../runtime/stop-signals.js';
import type { Logger } from '../../runtime/log.js';

function harness() {
  const calls: string[] = [];
  const logged: string[] = [];
  let clock = 0;
  const log = { info: (message: string) => logged.push(message), warn: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Logger;
  const handle = stopSignalHandler({ log, first: (s) => calls.push(`first ${s}`), second: (s) => calls.push(`second ${s}`), now: () => clock });
  return { calls, logged, handle, at: (ms: number) => { clock = ms; } };
}

test('the same signal again at once is one stop request (Ctrl-C on npm start: the terminal and npm both send it)', () => {
  const h = harness();
  h.handle('SIGINT');
  h.at(3);
  h.handle('SIGINT');
  assert.deepEqual(h.calls, ['first SIGINT']);
  assert.equal(h.logged.length, 1, 'the duplicate is logged');
  h.at(DUPLICATE_WINDOW_MS - 1);
  h.handle('SIGINT');
  assert.deepEqual(h.calls, ['first SIGINT']);
});

test('the same signal later, or another signal at any time, gives the graceful stop up, once', () => {
  const later = harness();
  later.handle('SIGTERM');
  later.at(DUPLICATE_WINDOW_MS);
  later.handle('SIGTERM');
  later.handle('SIGTERM');
  assert.deepEqual(later.calls, ['first SIGTERM', 'second SIGTERM']);
  const other = harness();
  other.handle('SIGTERM');
  other.at(1);
  other.handle('SIGINT');
  assert.deepEqual(other.calls, ['first SIGTERM', 'second SIGINT']);
});
