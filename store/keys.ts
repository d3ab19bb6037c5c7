/**
 * Fixed-width big-endian key encoders. LMDB orders keys by bytes (memcmp), so a
 * big-endian u64 sorts exactly like the number it holds and a range scan over
 * block numbers or sequences is a plain cursor walk.
 */

export const U64_KEY_BYTES = 8;
export const HASH_KEY_BYTES = 32;

const U64_MAX = (1n << 64n) - 1n;

/** Encodes a non-negative integer below 2^64 as 8 big-endian bytes. */
export function u64Key(value: bigint | number): Buffer {
  const asBigInt = typeof value === 'number' ? numberToU64(value) : value;
  if (asBigInt < 0n || asBigInt > U64_MAX) throw new RangeError(`u64 key out of range: ${asBigInt}`);
  const key = Buffer.allocUnsafe(U64_KEY_BYTES);
  key.writeBigUInt64BE(asBigInt, 0);
  return key;
}

/** Reads an 8-byte big-endian u64 at `offset` (default 0). */
export function readU64(bytes: Uint8Array, offset = 0): bigint {
  if (offset < 0 || bytes.length < offset + U64_KEY_BYTES) {
    throw new RangeError(`need ${U64_KEY_BYTES} bytes at offset ${offset}, have ${bytes.length}`);
  }
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(offset, false);
}

/** Decodes an 8-byte u64 key; the key must be exactly 8 bytes. */
export function decodeU64Key(key: Uint8Array): bigint {
  if (key.length !== U64_KEY_BYTES) throw new RangeError(`u64 key must be ${U64_KEY_BYTES} bytes, got ${key.length}`);
  return readU64(key);
}

/** Decodes an 8-byte u64 key as a JavaScript number; refuses values above 2^53 - 1. */
export function decodeU64KeyAsNumber(key: Uint8Array): number {
  const value = decodeU64Key(key);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`u64 key ${value} does not fit a safe integer`);
  return Number(value);
}

/** A 32-byte hash key from bytes (viewed, not copied) or 0x-prefixed hex. */
export function hashKey(hash: Uint8Array | string): Buffer {
  const bytes = typeof hash === 'string' ? hexToBuffer(hash) : Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength);
  if (bytes.length !== HASH_KEY_BYTES) throw new RangeError(`hash key must be ${HASH_KEY_BYTES} bytes, got ${bytes.length}`);
  return bytes;
}

function numberToU64(value: number): bigint {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`u64 key must be a non-negative safe integer, got ${value}`);
  return BigInt(value);
}

function hexToBuffer(hex: string): Buffer {
  if (!/^0x(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new RangeError('hash must be 0x-prefixed hex with an even number of digits');
  return Buffer.from(hex.slice(2), 'hex');
}
