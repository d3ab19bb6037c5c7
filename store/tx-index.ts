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

function encodeLocation(blockHash: Uint8Array, index: number): Buffer {
  const value = Buffer.allocUnsafe(TX_LOCATION_BYTES);
  value.set(blockHash, 0);
  value.writeUInt32BE(index, 32);
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
