import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, redactUrl } from '../../runtime/log.js';

function capture(maxLinesPerSecond = 1000) {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ lane: 'test', level: 'debug', maxLinesPerSecond, destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) } });
  return { log, lines };
}

test('log lines are JSON with time, level, lane, message and fields', () => {
  const { log, lines } = capture();
  log.info('block applied', { number: 12 });
  log.child('chain').warn('reorg');
  assert.equal(lines.length, 2);
  assert.match(String(lines[0]!.time), /^\d{4}-\d\d-\d\dT/);
  assert.deepEqual({ ...lines[0], time: 'x' }, { time: 'x', level: 'info', lane: 'test', number: 12, message: 'block applied' });
  assert.equal(lines[1]!.lane, 'chain');
  assert.equal(lines[1]!.level, 'warn');
});

test('secret-bearing fields are never written', () => {
  const { log, lines } = capture();
  log.info('auth', { token: 'abc', headers: { authorization: 'Bearer abc' }, credential: 'xyz' });
  const text = JSON.stringify(lines);
  assert.ok(!text.includes('abc') && !text.includes('xyz'));
  assert.match(text, /\[redacted\]/);
  assert.equal(redactUrl('https://user:pw@host.example/path?key=secret#frag'), 'https://host.example/path?…');
});

test('the rate bound drops the excess and reports how many lines it suppressed', () => {
  const { log, lines } = capture(5);
  for (let i = 0; i < 50; i += 1) log.info('spam', { i });
  assert.equal(lines.length, 5);
});
