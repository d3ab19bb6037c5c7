import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Prng, randomStream } from '../../../net/devnet/index.js';

function draws(prng: Prng, count: number): number[] {
  return Array.from({ length: count }, () => prng.uint32());
}

describe('devnet PRNG', () => {
  it('repeats a stream for the same seed and label, and differs for another label, part or seed', () => {
    assert.deepEqual(draws(randomStream('s', 'block', 1, 0), 8), draws(randomStream('s', 'block', 1, 0), 8));
    const reference = draws(randomStream('s', 'block', 1, 0), 8);
    assert.notDeepEqual(draws(randomStream('s', 'block', 1, 1), 8), reference);
    assert.notDeepEqual(draws(randomStream('s', 'block', 2, 0), 8), reference);
    assert.notDeepEqual(draws(randomStream('t', 'block', 1, 0), 8), reference);
  });

  it('keeps draws in range and roughly uniform', () => {
    const prng = randomStream('s', 'range');
    let sum = 0;
    const seen = new Set<number>();
    for (let i = 0; i < 20_000; i++) {
      const f = prng.float();
      assert.ok(f >= 0 && f < 1);
      sum += f;
      const n = prng.between(3, 7);
      assert.ok(n >= 3 && n <= 7);
      seen.add(n);
      const b = prng.bigintBetween(10n, 12n);
      assert.ok(b >= 10n && b <= 12n);
    }
    assert.ok(Math.abs(sum / 20_000 - 0.5) < 0.01);
    assert.deepEqual([...seen].sort(), [3, 4, 5, 6, 7]);
  });

  it('shuffles into a permutation and fills bytes deterministically', () => {
    const items = Array.from({ length: 50 }, (_, i) => i);
    const shuffled = randomStream('s', 'shuffle').shuffle([...items]);
    assert.deepEqual([...shuffled].sort((a, b) => a - b), items);
    assert.notDeepEqual(shuffled, items);
    assert.deepEqual(randomStream('s', 'bytes').bytes(37), randomStream('s', 'bytes').bytes(37));
    assert.equal(randomStream('s', 'bytes').bytes(37).length, 37);
  });

  it('rejects a seed shorter than 16 bytes and empty bounds', () => {
    assert.throws(() => new Prng(new Uint8Array(8)), /16-byte seed/);
    assert.throws(() => randomStream('s', 'x').int(0), /positive bound/);
    assert.throws(() => randomStream('s', 'x').bigintBelow(0n), /positive bound/);
  });
});
