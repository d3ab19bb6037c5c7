/**
 * Entity key layout of the blob processor's table. A one-byte prefix names the collection; numbers are big-endian,
 * so LMDB's byte order is numeric order and a block range, or one block's transactions, is a single cursor walk.
 *
 *   'b' ‖ u64 block number                     → rendered BlobsBlock
 *   't' ‖ 32-byte transaction hash             → rendered BlobTransaction
 *   'i' ‖ u64 block number ‖ u32 tx index      → 32-byte transaction hash (canonical index within the block)
 *   's' ‖ u64 activation timestamp ‖ fork name → rendered BlobSchedule
 */
import { hashKey, u64Key } from '../sdk/tables.js';

export const BLOCK_KEY_PREFIX = 0x62;
export const TRANSACTION_KEY_PREFIX = 0x74;
export const BLOCK_TRANSACTION_INDEX_KEY_PREFIX = 0x69;
export const SCHEDULE_KEY_PREFIX = 0x73;

const U32_MAX = 0xffff_ffff;

function prefixed(prefix: number, ...parts: Buffer[]): Buffer {
  return Buffer.concat([Buffer.of(prefix), ...parts]);
}

export function blockKey(blockNumber: number): Buffer {
  return prefixed(BLOCK_KEY_PREFIX, u64Key(blockNumber));
}

/** The block number of a `blockKey`. */
export function blockNumberOfKey(key: Uint8Array): number {
  if (key.length !== 9 || key[0] !== BLOCK_KEY_PREFIX) throw new RangeError('not a blobs block key');
  // Two big-endian u32 halves (exact for every block number below 2^53), without a Buffer view or a BigInt per row.
  const high = ((key[1]! << 24) | (key[2]! << 16) | (key[3]! << 8) | key[4]!) >>> 0;
  const low = ((key[5]! << 24) | (key[6]! << 16) | (key[7]! << 8) | key[8]!) >>> 0;
  return high * 0x1_0000_0000 + low;
}

export function txKey(txHash: string | Uint8Array): Buffer {
  return prefixed(TRANSACTION_KEY_PREFIX, hashKey(txHash));
}

/** Start of one block's index entries: walk from here while keys start with it. */
export function blockTxIndexPrefix(blockNumber: number): Buffer {
  return prefixed(BLOCK_TRANSACTION_INDEX_KEY_PREFIX, u64Key(blockNumber));
}

export function blockTxIndexKey(blockNumber: number, transactionIndex: number): Buffer {
  if (!Number.isInteger(transactionIndex) || transactionIndex < 0 || transactionIndex > U32_MAX) {
    throw new RangeError(`transaction index must be a u32, got ${transactionIndex}`);
  }
  const index = Buffer.allocUnsafe(4);
  index.writeUInt32BE(transactionIndex, 0);
  return prefixed(BLOCK_TRANSACTION_INDEX_KEY_PREFIX, u64Key(blockNumber), index);
}

export function scheduleKey(activationTimestamp: number, forkName: string): Buffer {
  return prefixed(SCHEDULE_KEY_PREFIX, u64Key(activationTimestamp), Buffer.from(forkName, 'utf8'));
}
