/** Byte and hex primitives shared by every format in `net/eth`. Hex strings are lower-case and `0x`-prefixed. */
import { InvalidHexError } from './errors.js';

import type { Hex } from '../../store/chain-types.js';

export type { Hash, Hex } from '../../store/chain-types.js';
/** A 20-byte account address as lower-case hex. */
export type Address = `0x${string}`;

function nibble(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  if (code >= 65 && code <= 70) return code - 55;
  return -1;
}

export function isHex(value: unknown): value is Hex {
  return typeof value === 'string' && /^0x[0-9a-fA-F]*$/.test(value);
}

/** A 20-byte address as `0x`-hex of either case (kinds' options and query parameters take either, then lower-case it). */
export function isAddressHex(value: string): boolean {
  return /^0x[0-9a-fA-F]{40}$/.test(value);
}

/** A 32-byte hash as `0x`-hex of either case. */
export function isHashHex(value: string): boolean {
  return /^0x[0-9a-fA-F]{64}$/.test(value);
}

/**
 * Node's hex encoder makes one flat string. Appending two digits at a time made a rope of one V8 cons
 * string per byte: ~900 heap bytes for a 32-byte hash instead of ~110, and a flattening later. The
 * JSON-RPC block cache held ~2 MB per 200-transaction block that way and ran its lane out of heap.
 */
export function bytesToHex(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;
}

/** Decodes `0x`-prefixed hex of even length; `expectedLength` (in bytes) is checked when given. */
export function hexToBytes(hex: string, expectedLength?: number): Uint8Array {
  if (!hex.startsWith('0x') || hex.length % 2 !== 0) throw new InvalidHexError(hex, 'an even number of hex digits after 0x');
  const length = (hex.length - 2) / 2;
  if (expectedLength !== undefined && length !== expectedLength) {
    throw new InvalidHexError(hex, `${expectedLength} bytes, got ${length}`);
  }
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const hi = nibble(hex.charCodeAt(2 + i * 2));
    const lo = nibble(hex.charCodeAt(3 + i * 2));
    if (hi < 0 || lo < 0) throw new InvalidHexError(hex, 'hex digits only');
    out[i] = (hi << 4) | lo;
  }
  return out;
}

/** Big-endian minimal bytes of a non-negative integer (zero is the empty array, as RLP wants). */
export function bigintToBytes(value: bigint): Uint8Array {
  if (value < 0n) throw new RangeError(`negative integer ${value} has no unsigned encoding`);
  if (value === 0n) return new Uint8Array(0);
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return hexToBytes(`0x${hex}`);
}

export function bytesToBigInt(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  return BigInt(bytesToHex(bytes));
}

/** Left-pads to `length` bytes; throws when the value is already longer. */
export function padBytes(bytes: Uint8Array, length: number): Uint8Array {
  if (bytes.length > length) throw new RangeError(`${bytes.length} bytes do not fit in ${length}`);
  if (bytes.length === length) return bytes;
  const out = new Uint8Array(length);
  out.set(bytes, length - bytes.length);
  return out;
}

/** A 0x-quantity (JSON-RPC style: no leading zeros, `0x0` for zero). */
export function bigintToQuantity(value: bigint): Hex {
  return `0x${value.toString(16)}`;
}

export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
