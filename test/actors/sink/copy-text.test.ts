import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyEscape, copyLine } from '../../../actors/sink/copy-text.js';

test('COPY text escapes backslash, newline, carriage return and tab, and writes NULL as \\N', () => {
  assert.equal(copyEscape('plain'), 'plain');
  assert.equal(copyEscape('a\\b\tc\nd\re'), 'a\\\\b\\tc\\nd\\re');
  const json = JSON.stringify({ note: 'tab\tand "quote" and \\ backslash' });
  assert.equal(copyLine({ key: '01ab', data: json, blockNumber: null, blockHash: null, finality: null, sequence: '7' }), `01ab\t${json.replace(/\\/g, '\\\\')}\t\\N\t\\N\t\\N\t7\n`);
  assert.equal(copyLine({ key: 'k', data: '{}', blockNumber: 12, blockHash: '0xab', finality: 'included', sequence: '3' }), 'k\t{}\t12\t0xab\tincluded\t3\n');
});
