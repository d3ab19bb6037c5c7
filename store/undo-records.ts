/**
 * The keys of an ordered-state instance's undo table (the inverse writes kept for blocks not yet
 * finalized; the values and their use: actors/kinds/sdk/state.ts). One record a block: key
 * u64 block ‖ u32 0xffffffff ‖ u32 count of inverses, so the table's keys alone say how many inverse
 * writes are pending. Stores written by earlier versions hold one record per write: key u64 block ‖
 * u32 ordinal (an ordinal never reaches the marker).
 */
import type { BinaryTable } from './store.js';

export const BLOCK_RECORD_KEY_BYTES = 16;
export const WRITE_RECORD_KEY_BYTES = 12;
const BLOCK_RECORD_MARKER = 0xffffffff;

/** The key of `block`'s record of `entries` inverses. */
export function blockRecordKey(block: number, entries: number): Buffer {
  // Block numbers are safe integers: the u64 as two u32 halves, without a BigInt.
  const key = Buffer.allocUnsafe(BLOCK_RECORD_KEY_BYTES);
  key.writeUInt32BE(Math.floor(block / 2 ** 32), 0);
  key.writeUInt32BE(block >>> 0, 4);
  key.writeUInt32BE(BLOCK_RECORD_MARKER, 8);
  key.writeUInt32BE(entries, 12);
  return key;
}

/** The inverse writes an undo table keeps (network status's `pendingDeltas`), from its keys alone. */
export function pendingInverses(undo: BinaryTable): number {
  let count = 0;
  for (const key of undo.getKeys({})) {
    const bytes = key as Buffer;
    count += bytes.length === BLOCK_RECORD_KEY_BYTES && bytes.readUInt32BE(8) === BLOCK_RECORD_MARKER ? bytes.readUInt32BE(12) : 1;
  }
  return count;
}
