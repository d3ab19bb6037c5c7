import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeCoverage, INITIAL_PROGRESS, pendingThrough, type ProcessorProgress } from '../../store/coverage.js';

const A = `0x${'aa'.repeat(32)}` as const;
const B = `0x${'bb'.repeat(32)}` as const;

function at(number: number | null, hash: `0x${string}` = A): ProcessorProgress {
  return { ...INITIAL_PROGRESS, configuredStartBlock: 0, reduceCursor: number === null ? null : { number, hash } };
}

test('pendingThrough: the live head while the reduce cursor is behind it, null once the state reflects the head', () => {
  assert.equal(pendingThrough(at(10), 0, 14, B), 14, 'blocks 11..14 accepted, not reduced');
  assert.equal(pendingThrough(at(null), 0, 3, B), 3, 'nothing reduced yet');
  assert.equal(pendingThrough(at(14), 0, 14, A), null, 'the state reflects the head');
  assert.equal(pendingThrough(at(14, A), 0, 14, B), 14, 'the cursor is on another branch at the head\'s height: the replacement is pending');
  assert.equal(pendingThrough(at(14), 0, 12, B), null, 'a head lowered by a reorg the lane has not reduced yet: nothing past the cursor to fold');
  assert.equal(pendingThrough(at(null), 20, 12, B), null, 'the head below the configured start');
  assert.equal(pendingThrough(at(5), 0, null, null), null, 'no head recorded');
});

test('describeCoverage carries pendingThrough only for ordered-state instances', () => {
  const input = { chainId: 1, ranges: [{ from: 0, to: 10 }], progress: at(10), liveHeadBlock: 12, liveHeadHash: B };
  assert.equal(describeCoverage({ ...input, orderedState: true }).pendingThrough, 12);
  assert.equal(describeCoverage({ ...input, orderedState: false }).pendingThrough, undefined);
  assert.equal(describeCoverage({ ...input, progress: at(12, B), orderedState: true }).pendingThrough, null);
});
