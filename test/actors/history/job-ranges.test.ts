import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { missingCount, nextMissing, previousMissing } from '../../../actors/history/job-ranges.js';

const ranges = [{ from: 5, to: 9 }, { from: 12, to: 12 }, { from: 20, to: 30 }];

test('missingCount counts the blocks of a range no coverage interval holds', () => {
  assert.equal(missingCount(ranges, 0, 40), 41 - 5 - 1 - 11);
  assert.equal(missingCount(ranges, 5, 9), 0);
  assert.equal(missingCount([], 3, 3), 1);
});

test('nextMissing walks the gaps in order, each cut to the chunk limit, and ends with null', () => {
  const chunks = [];
  for (let at = 0, chunk = nextMissing(ranges, at, 25, 3); chunk !== null; at = chunk.to + 1, chunk = nextMissing(ranges, at, 25, 3)) chunks.push(chunk);
  assert.deepEqual(chunks, [{ from: 0, to: 2 }, { from: 3, to: 4 }, { from: 10, to: 11 }, { from: 13, to: 15 }, { from: 16, to: 18 }, { from: 19, to: 19 }]);
});

test('walking nextMissing visits exactly the missing blocks, once each (property)', () => {
  fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 40 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 9 }), (covered, a, b, limit) => {
    const [from, to] = a <= b ? [a, b] : [b, a];
    const set = new Set(covered);
    const sorted = [...set].sort((x, y) => x - y);
    const merged: Array<{ from: number; to: number }> = [];
    for (const n of sorted) {
      const last = merged.at(-1);
      if (last && last.to === n - 1) last.to = n;
      else merged.push({ from: n, to: n });
    }
    const visited: number[] = [];
    for (let at = from, chunk = nextMissing(merged, at, to, limit); chunk !== null; at = chunk.to + 1, chunk = nextMissing(merged, at, to, limit)) {
      assert.ok(chunk.to - chunk.from + 1 <= limit);
      for (let n = chunk.from; n <= chunk.to; n += 1) visited.push(n);
    }
    const expected = [];
    for (let n = from; n <= to; n += 1) if (!set.has(n)) expected.push(n);
    assert.deepEqual(visited, expected);
    assert.equal(missingCount(merged, from, to), expected.length);
  }));
});

test('previousMissing walks the gaps from the top down, each cut to the chunk limit, visiting exactly the missing blocks (property)', () => {
  fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 40 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 9 }), (covered, a, b, limit) => {
    const [from, to] = a <= b ? [a, b] : [b, a];
    const set = new Set(covered);
    const merged: Array<{ from: number; to: number }> = [];
    for (const n of [...set].sort((x, y) => x - y)) {
      const last = merged.at(-1);
      if (last && last.to === n - 1) last.to = n;
      else merged.push({ from: n, to: n });
    }
    const visited: number[] = [];
    for (let at = to, chunk = previousMissing(merged, from, at, limit); chunk !== null; at = chunk.from - 1, chunk = at < from ? null : previousMissing(merged, from, at, limit)) {
      assert.ok(chunk.to - chunk.from + 1 <= limit);
      for (let n = chunk.to; n >= chunk.from; n -= 1) visited.push(n);
    }
    const expected = [];
    for (let n = to; n >= from; n -= 1) if (!set.has(n)) expected.push(n);
    assert.deepEqual(visited, expected);
  }));
});
