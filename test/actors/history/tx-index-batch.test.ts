/**
 * The deferred transaction index of history jobs (actors/history/tx-index-batch.ts, store/tx-index.ts "Deferred
 * entries") over a real store: the sort the batches are written in; a chunk recorded with it lists its blocks as
 * pending and is found by hash only once written (at the threshold or on flush), at the right block and position;
 * blocks left pending by a run that ended without writing them (kill -9) are indexed from their stored bodies at the
 * next start, and nothing stays listed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { recordProven } from '../../../actors/history/anchor.js';
import { DeferredTxIndex, FLUSH_RANGES } from '../../../actors/history/tx-index-batch.js';
import { keccak256 } from '../../../net/eth/keccak.js';
import { bytesToHex, type Hash } from '../../../net/eth/hex.js';
import { encodeRlp } from '../../../net/eth/rlp.js';
import type { HistoryBlock } from '../../../net/history/history-block.js';
import { openStore, type Store } from '../../../store/store.js';
import { lookupTransaction, readTxIndexPending, sortedEntryOrder, TX_ENTRY_BYTES } from '../../../store/tx-index.js';

const TXS_PER_BLOCK = 7;

/** Blocks from..to of a synthetic chain, each with `TXS_PER_BLOCK` typed transactions of random bytes in its body. */
function chain(from: number, to: number, txsPerBlock = TXS_PER_BLOCK): { blocks: HistoryBlock[]; txs: Array<{ hash: Uint8Array; block: Uint8Array; index: number }> } {
  const blocks: HistoryBlock[] = [];
  const txs: Array<{ hash: Uint8Array; block: Uint8Array; index: number }> = [];
  let parent = `0x${'00'.repeat(32)}` as Hash;
  for (let number = from; number <= to; number += 1) {
    const encodings = Array.from({ length: txsPerBlock }, () => Uint8Array.from([2, ...randomBytes(90)]));
    const body = encodeRlp([encodings, []]);
    const hash = randomBytes(32);
    encodings.forEach((encoding, index) => txs.push({ hash: keccak256(encoding), block: hash, index }));
    const hex = bytesToHex(hash) as Hash;
    blocks.push({ number, hash: hex, parentHash: parent, material: { number, hash, header: randomBytes(500), body, receipts: null } });
    parent = hex;
  }
  return { blocks, txs };
}

function tempStore(): { dataDir: string; store: Store } {
  const dataDir = mkdtempSync(join(tmpdir(), 'cdn-tx-index-batch-'));
  return { dataDir, store: openStore({ dataDir, chainId: 1 }) };
}

function assertIndexed(store: Store, txs: ReturnType<typeof chain>['txs']): void {
  for (const tx of txs) {
    const location = lookupTransaction(store, tx.hash);
    assert.ok(location, `transaction ${bytesToHex(tx.hash)} is indexed`);
    assert.deepEqual([bytesToHex(location.blockHash), location.index], [bytesToHex(tx.block), tx.index]);
  }
}

test('entries are ordered by their whole key, also within a bucket of the first two bytes', () => {
  const count = 5_000;
  const packed = randomBytes(count * TX_ENTRY_BYTES);
  // Few distinct leading bytes: every bucket holds many entries, so the within-bucket sort is what orders them.
  for (let i = 0; i < count; i += 1) packed.writeUInt16BE(i % 3, i * TX_ENTRY_BYTES);
  const key = (i: number) => packed.subarray(i * TX_ENTRY_BYTES, i * TX_ENTRY_BYTES + 32);
  const order = [...sortedEntryOrder(packed)];
  const expected = Array.from({ length: count }, (_, i) => i).sort((a, b) => Buffer.compare(key(a), key(b)));
  assert.deepEqual(order, expected);
});

test('a recorded chunk is listed as pending and found by hash once its entries are written, at the threshold or on flush', async () => {
  const { dataDir, store } = tempStore();
  try {
    // A threshold of 100 entries: the first two chunks (70 entries) stay buffered, the third writes all three.
    const index = new DeferredTxIndex(store, 100);
    const { blocks, txs } = chain(1, 25);
    await recordProven(store, blocks.slice(0, 5), true, index);
    await recordProven(store, blocks.slice(5, 10), true, index);
    assert.equal(lookupTransaction(store, txs[0]!.hash), undefined, 'not written below the threshold');
    assert.deepEqual(readTxIndexPending(store), [[1, 5], [6, 10]]);
    assert.equal(index.buffered, 70);
    await recordProven(store, blocks.slice(10, 15), true, index);
    assertIndexed(store, txs.slice(0, 15 * TXS_PER_BLOCK));
    assert.deepEqual(readTxIndexPending(store), []);
    assert.equal(index.buffered, 0);
    await recordProven(store, blocks.slice(15), true, index);
    assert.deepEqual(readTxIndexPending(store), [[16, 25]], 'listed until written');
    await index.flush();
    assertIndexed(store, txs);
    assert.deepEqual(readTxIndexPending(store), []);
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('blocks a run recorded but never indexed (its buffer lost, as with kill -9) are indexed at the next start', async () => {
  const { dataDir, store } = tempStore();
  const { blocks, txs } = chain(100, 160);
  try {
    const lost = new DeferredTxIndex(store);
    await recordProven(store, blocks.slice(0, 30), true, lost);
    await recordProven(store, blocks.slice(30), true, lost);
    assert.deepEqual(readTxIndexPending(store), [[100, 129], [130, 160]]);
  } finally {
    await store.close();
  }
  const reopened = openStore({ dataDir, chainId: 1 });
  try {
    assert.equal(lookupTransaction(reopened, txs[0]!.hash), undefined);
    const recovered = await new DeferredTxIndex(reopened, 50).recover();
    assert.deepEqual(recovered, { blocks: blocks.length, missing: [] });
    assertIndexed(reopened, txs);
    assert.deepEqual(readTxIndexPending(reopened), []);
    assert.deepEqual(await new DeferredTxIndex(reopened).recover(), { blocks: 0, missing: [] }, 'nothing is left listed');
  } finally {
    await reopened.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('chunks of blocks without transactions are written once FLUSH_RANGES are buffered, so the pending list stays short', async () => {
  const { dataDir, store } = tempStore();
  try {
    const index = new DeferredTxIndex(store);
    const { blocks } = chain(1, FLUSH_RANGES + 1, 0);
    for (let i = 0; i < FLUSH_RANGES - 1; i += 1) await recordProven(store, blocks.slice(i, i + 1), true, index);
    assert.equal(readTxIndexPending(store).length, FLUSH_RANGES - 1);
    await recordProven(store, blocks.slice(FLUSH_RANGES - 1, FLUSH_RANGES), true, index);
    assert.deepEqual(readTxIndexPending(store), [], 'written at the range limit with no entries');
    await recordProven(store, blocks.slice(FLUSH_RANGES), true, index);
    assert.deepEqual(readTxIndexPending(store), [[FLUSH_RANGES + 1, FLUSH_RANGES + 1]]);
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
