/**
 * Verified block material in the chain tables: header, body and receipts by block hash, and the
 * hash → number index. Written by the source lane (after verification), read by every other lane.
 * Canonical numbering (`chain.canonical`) and the journal belong to the chain lane.
 *
 * Values: header = RLP header; body = RLP [transactions, uncles, withdrawals?]; receipts = one RLP
 * list in the eth/69 shape ([type, status, cumulativeGasUsed, logs] per receipt; the bloom is
 * recomputed when needed). A block whose source had no receipts has no receipts entry.
 */
import { hashKey, readU64, u64Key } from './keys.js';
import type { Store } from './env.js';

export interface BlockMaterial {
  readonly number: number;
  readonly hash: Uint8Array;
  readonly header: Uint8Array;
  readonly body: Uint8Array;
  readonly receipts: Uint8Array | null;
}

/** Records verified blocks in one write transaction; the same block written twice is harmless. */
export function recordBlocks(store: Store, blocks: readonly BlockMaterial[]): Promise<boolean> {
  return store.write(() => {
    for (const block of blocks) putBlockMaterial(store, block);
    return true;
  });
}

/** Writes one block's material; call inside a write transaction. */
export function putBlockMaterial(store: Store, block: BlockMaterial): void {
  const key = hashKey(block.hash);
  const { headers, bodies, receipts, hashToNumber } = store.chain;
  headers.put(key, Buffer.from(block.header));
  bodies.put(key, Buffer.from(block.body));
  if (block.receipts) receipts.put(key, Buffer.from(block.receipts));
  hashToNumber.put(key, u64Key(block.number));
}

export function getHeaderBytes(store: Store, hash: Uint8Array): Buffer | undefined {
  return store.chain.headers.getBinary(hashKey(hash)) as Buffer | undefined;
}

export function getBodyBytes(store: Store, hash: Uint8Array): Buffer | undefined {
  return store.chain.bodies.getBinary(hashKey(hash)) as Buffer | undefined;
}

export function getReceiptsBytes(store: Store, hash: Uint8Array): Buffer | undefined {
  return store.chain.receipts.getBinary(hashKey(hash)) as Buffer | undefined;
}

export function getBlockNumber(store: Store, hash: Uint8Array): number | undefined {
  const value = store.chain.hashToNumber.getBinary(hashKey(hash));
  return value ? Number(readU64(value)) : undefined;
}

/** The canonical hash at `number`, or undefined when nothing is canonical there. */
export function getCanonicalHash(store: Store, number: number): Buffer | undefined {
  return store.chain.canonical.getBinary(u64Key(number)) as Buffer | undefined;
}
