import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scheduleInForce } from '../../../../../actors/kinds/blobs/query/schedule-in-force.js';

const ROWS = [
  { activationBlock: 100, activationTimestamp: 1000 },
  { activationBlock: 200, activationTimestamp: 2000 },
  { activationBlock: null, activationTimestamp: 3000 },
];

test('with the block timestamp the last row activated at or before it is in force', () => {
  assert.equal(scheduleInForce(ROWS, 150, 1500), 0);
  assert.equal(scheduleInForce(ROWS, 200, 2000), 1, 'activation is inclusive');
  assert.equal(scheduleInForce(ROWS, 999, 3001), 2);
  assert.equal(scheduleInForce(ROWS, 50, 999), null, 'before the first blob fork nothing is in force');
});

test('without it, known activation blocks decide unless an unresolved row may already be active', () => {
  assert.equal(scheduleInForce(ROWS, 150, null), 0, 'the next row activates later: settled');
  assert.equal(scheduleInForce(ROWS, 99, null), null);
  assert.equal(scheduleInForce(ROWS, 250, null), 'unknown', 'the unresolved third row may have activated');
  assert.equal(scheduleInForce([{ activationBlock: null, activationTimestamp: 10 }], 5, null), 'unknown');
});
