/**
 * The canonical transaction index (`chain.txIndex`): transaction hash → the canonical block that
 * includes it and its index there. The chain lane writes it in the same transaction as the journal
 * moves (apply indexes a block's transactions, undo removes the entries that point at the undone
 * block), so a reader sees the index and `chain.canonical` agree.
 *
 * Value layout (36 bytes): block hash (32) ‖ u32 big-endian transaction index.
 */
import { hashKey } from './keys.js';
import type { Store } from './store.js';

export const TX_LOCATION_BYTES = 36;

export interface TxLocation {
  readonly blockHash: Buffer;
  readonly index: number;
}

/** Writes a location (block hash ‖ u32 index) into `target` at `at`. */
function writeLocation(target: Buffer, at: number, blockHash: Uint8Array, index: number): void {
  target.set(blockHash, at);
  target.writeUInt32BE(index, at + 32);
}

function encodeLocation(blockHash: Uint8Array, index: number): Buffer {
  const value = Buffer.allocUnsafe(TX_LOCATION_BYTES);
  writeLocation(value, 0, blockHash, index);
  return value;
}

/** Indexes a block's transactions (hashes in block order); call inside a write transaction. */
export function indexTransactions(store: Store, blockHash: Uint8Array, txHashes: readonly Uint8Array[]): void {
  txHashes.forEach((txHash, index) => store.chain.txIndex.put(hashKey(txHash), encodeLocation(blockHash, index)));
}

/** Removes the entries of an undone block, keeping any that already point at another block; inside a write transaction. */
export function unindexTransactions(store: Store, blockHash: Uint8Array, txHashes: readonly Uint8Array[]): void {
  const owner = Buffer.from(blockHash.buffer, blockHash.byteOffset, blockHash.byteLength);
  for (const txHash of txHashes) {
    const key = hashKey(txHash);
    const value = store.chain.txIndex.getBinary(key);
    if (value && value.length === TX_LOCATION_BYTES && owner.equals(value.subarray(0, 32))) store.chain.txIndex.remove(key);
  }
}

export function lookupTransaction(store: Store, txHash: Uint8Array): TxLocation | undefined {
  const value = store.chain.txIndex.getBinary(hashKey(txHash));
  if (!value || value.length !== TX_LOCATION_BYTES) return undefined;
  return { blockHash: Buffer.from(value.subarray(0, 32)), index: value.readUInt32BE(32) };
}

/** Whether the index holds nothing yet (a store written before the index existed gets backfilled). */
export function txIndexIsEmpty(store: Store): boolean {
  for (const _ of store.chain.txIndex.getKeys({ limit: 1 })) return false;
  return true;
}

/**
 * Deferred entries (actors/history/tx-index-batch.ts). A history job records thousands of blocks a minute, each
 * with ~200 transactions under random hash keys: put chunk by chunk, every transaction dirtied its own leaf page of
 * a table that grows with the range (a copy-on-write page a transaction, ~10 µs each at 2M entries and rising), so
 * the job's record cost grew with its length. Its entries are buffered instead and written sorted, many chunks at
 * once, in key-range slices; the blocks whose entries are not written yet are listed under this meta key in the same
 * transaction as their links, so a restart (even after kill -9) indexes them again from their stored bodies.
 */
const PENDING_KEY = 'txIndexPending';
/** Bytes of a buffered entry: the 32-byte key (transaction hash) followed by its 36-byte location. */
export const TX_ENTRY_BYTES = 32 + TX_LOCATION_BYTES;
/** Entries per write transaction of a sorted batch: each slice is one key range, so it dirties only its pages. */
const SLICE_ENTRIES = 65_536;

/** A range of blocks, inclusive, whose index entries are deferred. */
export type PendingRange = readonly [from: number, to: number];

export function readTxIndexPending(store: Store): PendingRange[] {
  const value = store.meta.get(PENDING_KEY);
  return Array.isArray(value) ? value.filter((r): r is PendingRange => Array.isArray(r) && r.length === 2 && r.every(Number.isSafeInteger)) : [];
}

/** Lists `range` as deferred; call inside the write transaction that records its blocks. */
export function markTxIndexPending(store: Store, range: PendingRange): void {
  store.meta.put(PENDING_KEY, [...readTxIndexPending(store), [range[0], range[1]]]);
}

/** A block's entries packed for `writeTxIndexSorted`: key ‖ location per transaction, in block order. */
export function packTxEntries(blockHash: Uint8Array, txHashes: readonly Uint8Array[]): Buffer {
  const packed = Buffer.allocUnsafe(txHashes.length * TX_ENTRY_BYTES);
  txHashes.forEach((txHash, index) => {
    const at = index * TX_ENTRY_BYTES;
    packed.set(txHash, at);
    writeLocation(packed, at + 32, blockHash, index);
  });
  return packed;
}

/**
 * The entries' order by key: counting sort on the first two bytes (the keys are hashes, so the 65,536 buckets hold a
 * handful each), then insertion sort within a bucket on the whole key.
 */
export function sortedEntryOrder(packed: Buffer): Uint32Array {
  const count = packed.length / TX_ENTRY_BYTES;
  const starts = new Uint32Array(65_537);
  for (let i = 0; i < count; i += 1) starts[packed.readUInt16BE(i * TX_ENTRY_BYTES) + 1]! += 1;
  for (let b = 1; b <= 65_536; b += 1) starts[b]! += starts[b - 1]!;
  const next = starts.slice(0, 65_536);
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i += 1) order[next[packed.readUInt16BE(i * TX_ENTRY_BYTES)]!++] = i;
  // Key of entry a against key of entry b, compared in place (no view allocated per comparison).
  const compareKeys = (a: number, b: number) => packed.compare(packed, b * TX_ENTRY_BYTES, b * TX_ENTRY_BYTES + 32, a * TX_ENTRY_BYTES, a * TX_ENTRY_BYTES + 32);
  for (let b = 0; b < 65_536; b += 1) {
    for (let j = starts[b]! + 1; j < starts[b + 1]!; j += 1) {
      const item = order[j]!;
      let k = j - 1;
      while (k >= starts[b]! && compareKeys(order[k]!, item) > 0) {
        order[k + 1] = order[k]!;
        k -= 1;
      }
      order[k + 1] = item;
    }
  }
  return order;
}

/**
 * Writes packed entries in key order, a slice of keys per write transaction; the last one also takes `ranges` off the
 * deferred list (a crash between slices leaves them listed: indexed again, the same entries, at the next start).
 */
export async function writeTxIndexSorted(store: Store, packed: Buffer, ranges: readonly PendingRange[]): Promise<void> {
  const order = sortedEntryOrder(packed);
  const table = store.chain.txIndex;
  const slices = Math.max(1, Math.ceil(order.length / SLICE_ENTRIES));
  for (let slice = 0; slice < slices; slice += 1) {
    const end = Math.min(order.length, (slice + 1) * SLICE_ENTRIES);
    await store.write(() => {
      for (let j = slice * SLICE_ENTRIES; j < end; j += 1) {
        const at = order[j]! * TX_ENTRY_BYTES;
        table.put(packed.subarray(at, at + 32), packed.subarray(at + 32, at + TX_ENTRY_BYTES));
      }
      if (slice === slices - 1) unmarkTxIndexPending(store, ranges);
    });
  }
}

/** Takes `ranges` off the deferred list, one listed entry for each; inside a write transaction. */
function unmarkTxIndexPending(store: Store, ranges: readonly PendingRange[]): void {
  if (ranges.length === 0) return;
  const left = [...ranges];
  store.meta.put(PENDING_KEY, readTxIndexPending(store).filter(([from, to]) => {
    const at = left.findIndex((r) => r[0] === from && r[1] === to);
    if (at >= 0) left.splice(at, 1);
    return at < 0;
  }));
}
