/** Converts typed field values back to bytes for encoding, naming the field when a value has the wrong shape. */
import { InvalidFieldError, InvalidHexError } from './errors.js';
import { hexToBytes, type Hex } from './hex.js';

/** Bytes of a hex field of any length (calldata, extraData). */
export function dataBytes(value: Hex, subject: string, field: string): Uint8Array {
  try {
    return hexToBytes(value);
  } catch (error) {
    if (error instanceof InvalidHexError) throw new InvalidFieldError(subject, field, error.message);
    throw error;
  }
}

/** Bytes of a fixed-width hex field (hash, address, bloom, nonce). */
export function fixedBytes(value: Hex, length: number, subject: string, field: string): Uint8Array {
  const bytes = dataBytes(value, subject, field);
  if (bytes.length !== length) throw new InvalidFieldError(subject, field, `expected ${length} bytes, got ${bytes.length}`);
  return bytes;
}

/** A non-negative integer as a bigint (numbers must be safe integers). */
export function uintField(value: bigint | number, subject: string, field: string, maxBits = 256): bigint {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new InvalidFieldError(subject, field, `${value} is not a safe integer`);
  }
  const big = BigInt(value);
  if (big < 0n || big >= 1n << BigInt(maxBits)) {
    throw new InvalidFieldError(subject, field, `${big} is outside 0..2^${maxBits}-1`);
  }
  return big;
}
