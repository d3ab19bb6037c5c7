import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gaps } from '../../../actors/history/subscriptions.js';

test('gaps: the uncovered runs of a range, in order, cut to it', () => {
  assert.deepEqual(gaps([], 0, 9), [{ from: 0, to: 9 }]);
  assert.deepEqual(gaps([{ from: 0, to: 9 }], 0, 9), []);
  assert.deepEqual(gaps([{ from: 3, to: 4 }], 0, 9), [{ from: 0, to: 2 }, { from: 5, to: 9 }]);
  assert.deepEqual(gaps([{ from: 0, to: 2 }, { from: 5, to: 6 }, { from: 20, to: 30 }], 1, 25), [{ from: 3, to: 4 }, { from: 7, to: 19 }]);
  assert.deepEqual(gaps([{ from: 0, to: 2 }, { from: 3, to: 6 }], 0, 8), [{ from: 7, to: 8 }], 'adjacent ranges leave no gap between them');
  assert.deepEqual(gaps([{ from: 100, to: 200 }], 10, 20), [{ from: 10, to: 20 }], 'coverage above the range');
  assert.deepEqual(gaps([{ from: 0, to: 5 }], 10, 20), [{ from: 10, to: 20 }], 'coverage below the range');
  assert.deepEqual(gaps([{ from: 0, to: 15 }], 10, 20), [{ from: 16, to: 20 }]);
  assert.deepEqual(gaps([{ from: 15, to: 40 }], 10, 20), [{ from: 10, to: 14 }]);
});
