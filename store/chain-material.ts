/**
 * Verified block material in the chain tables: header, body and receipts by block number ‖ block hash, and the
 * hash → number index. Written by the source lane (after verification), read by every other lane.
 * Canonical numbering (`chain.canonical`) and the journal belong to the chain lane.
 *
 * Keys lead with the block number so that writing a block, and reading back the blocks just written, touch the
 * tables' right edge: with hash keys every block went to a random leaf of each table, and a long backfill kept the
 * whole store's map resident (issue 14, memory across range lengths). The hash still completes the key, so blocks of
 * competing branches at one height live side by side. A reader that knows the number passes it; otherwise it is read
 * from `chain.hashToNumber`. Stores written before this layout hold 32-byte hash keys: a miss on the number ‖ hash key
 * reads the hash key, so those blocks stay readable (new blocks are always written under the new key).
 *
 * Values: header = RLP header; body = RLP [transactions, uncles, withdrawals?]; receipts = one RLP
 * list in the eth/69 shape ([type, status, cumulativeGasUsed, logs] per receipt; the bloom is
 * recomputed when needed). A block whose source had no receipts has no receipts entry.
 */
import { HASH_KEY_BYTES, hashKey, readU64, U64_KEY_BYTES, u64Key } from './keys.js';
import type { BinaryTable, Store } from './store.js';

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
  const key = materialKey(block.number, block.hash);
  const { headers, bodies, receipts, hashToNumber } = store.chain;
  headers.put(key, Buffer.from(block.header));
  bodies.put(key, Buffer.from(block.body));
  if (block.receipts) receipts.put(key, Buffer.from(block.receipts));
  hashToNumber.put(hashKey(block.hash), u64Key(block.number));
}

export const MATERIAL_KEY_BYTES = U64_KEY_BYTES + HASH_KEY_BYTES;

/** The key of a block's header, body and receipts: u64 block number ‖ block hash (40 bytes). */
export function materialKey(number: number, hash: Uint8Array): Buffer {
  if (!Number.isSafeInteger(number) || number < 0) throw new RangeError(`block number must be a non-negative safe integer, got ${number}`);
  const key = Buffer.allocUnsafe(MATERIAL_KEY_BYTES);
  key.writeBigUInt64BE(BigInt(number), 0);
  key.set(hashKey(hash), U64_KEY_BYTES);
  return key;
}

/** `number`: the block's number when the caller knows it (saves the hash → number look-up). */
export function getHeaderBytes(store: Store, hash: Uint8Array, number?: number): Buffer | undefined {
  return readMaterial(store, store.chain.headers, hash, number);
}

export function getBodyBytes(store: Store, hash: Uint8Array, number?: number): Buffer | undefined {
  return readMaterial(store, store.chain.bodies, hash, number);
}

export function getReceiptsBytes(store: Store, hash: Uint8Array, number?: number): Buffer | undefined {
  return readMaterial(store, store.chain.receipts, hash, number);
}

/** The keys a block's material may be under: number ‖ hash (this version), then the hash alone (stores of earlier versions). */
export function materialKeys(number: number, hash: Uint8Array): readonly [Buffer, Buffer] {
  return [materialKey(number, hash), hashKey(hash)];
}

function readMaterial(store: Store, table: BinaryTable, hash: Uint8Array, number: number | undefined): Buffer | undefined {
  const at = number ?? getBlockNumber(store, hash);
  if (at === undefined) return undefined;
  const [current, earlier] = materialKeys(at, hash);
  return (table.getBinary(current) ?? table.getBinary(earlier)) as Buffer | undefined;
}

export function getBlockNumber(store: Store, hash: Uint8Array): number | undefined {
  const value = store.chain.hashToNumber.getBinary(hashKey(hash));
  return value ? Number(readU64(value)) : undefined;
}

/** The canonical hash at `number`, or undefined when nothing is canonical there. */
export function getCanonicalHash(store: Store, number: number): Buffer | undefined {
  return store.chain.canonical.getBinary(u64Key(number)) as Buffer | undefined;
}
