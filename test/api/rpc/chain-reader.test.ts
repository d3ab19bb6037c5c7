/**
 * The JSON-RPC block cache keeps a view per block until either bound is reached: the entry count, or the
 * estimated heap (8 bytes per stored byte). A block too large for the heap bound alone is still answered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ChainReader } from '../../../api/rpc/chain-reader.js';
import { devnetStore, type DevnetStore } from './devnet-store.js';

let d: DevnetStore;
before(async () => {
  d = await devnetStore({ seed: 'rpc-block-cache', transactionsPerBlock: 20, reorgEvery: 0 }, 12);
});
after(async () => {
  await d?.close();
});

describe('block cache bounds', () => {
  it('keeps every view within the entry and heap bounds, and drops the least recently used first', () => {
    const probe = new ChainReader(d.store, { entries: 1000, bytes: 1 << 30 });
    const weights = [1, 2, 3, 4].map((n) => probe.canonicalBlock(n)!.storedBytes * 8);
    // Room for blocks 1..3 by heap, not for 4: reading 4 evicts 1, the least recently used.
    const reader = new ChainReader(d.store, { entries: 1000, bytes: weights[0]! + weights[1]! + weights[2]! });
    const first = [1, 2, 3].map((n) => reader.canonicalBlock(n)!);
    assert.deepEqual([1, 2, 3].map((n) => reader.canonicalBlock(n)), first, 'three blocks fit: the same views come back');
    reader.canonicalBlock(4);
    assert.notEqual(reader.canonicalBlock(1), first[0], 'block 1 was evicted by heap');
    // The entry bound alone: reading 1 again makes 2 the least recently used, so 3 evicts 2 and keeps 1.
    const two = new ChainReader(d.store, { entries: 2, bytes: 1 << 30 });
    const [one, second] = [two.canonicalBlock(1)!, two.canonicalBlock(2)!];
    assert.equal(two.canonicalBlock(1), one);
    two.canonicalBlock(3);
    assert.equal(two.canonicalBlock(1), one, 'block 1 was used more recently than 2');
    assert.notEqual(two.canonicalBlock(2), second, 'block 2 was evicted');
    // A heap bound smaller than one block still answers it.
    const tiny = new ChainReader(d.store, { entries: 10, bytes: 1 });
    assert.equal(tiny.canonicalBlock(5)?.number, 5);
  });
});
