/** Readers for geth `genesis.json` values: quantities may be JSON numbers, 0x-hex or decimal strings. */
import { GenesisFormatError } from './errors.js';
import { bytesToHex, hexToBytes, isHex, padBytes, type Hex } from './hex.js';

export type JsonObject = { readonly [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function objectAt(value: unknown, key: string): JsonObject {
  if (!isObject(value)) throw new GenesisFormatError(key, 'expected a JSON object');
  return value;
}

/** A non-negative integer; `undefined`/`null` give `fallback` (or an error when there is none). */
export function quantityAt(value: unknown, key: string, fallback?: bigint): bigint {
  if (value === undefined || value === null) {
    if (fallback === undefined) throw new GenesisFormatError(key, 'missing');
    return fallback;
  }
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new GenesisFormatError(key, `${value} is not a non-negative safe integer`);
    return BigInt(value);
  }
  if (typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value)) return BigInt(value);
  if (typeof value === 'string' && /^[0-9]+$/.test(value)) return BigInt(value);
  throw new GenesisFormatError(key, `expected a number, 0x-hex or decimal string, got ${JSON.stringify(value)}`);
}

export function safeNumberAt(value: unknown, key: string, fallback?: number): number {
  const big = quantityAt(value, key, fallback === undefined ? undefined : BigInt(fallback));
  if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new GenesisFormatError(key, `${big} exceeds Number.MAX_SAFE_INTEGER`);
  return Number(big);
}

/** Hex bytes of any length (`0x` allowed); `undefined`/`null` give `fallback`. */
export function bytesAt(value: unknown, key: string, fallback: Hex = '0x'): Hex {
  if (value === undefined || value === null) return fallback;
  const text = typeof value === 'string' && !value.startsWith('0x') ? `0x${value}` : value;
  if (!isHex(text) || text.length % 2 !== 0) throw new GenesisFormatError(key, `expected even-length hex, got ${JSON.stringify(value)}`);
  return text.toLowerCase() as Hex;
}

/** Exactly `length` bytes, left-padding shorter (or odd-length) hex, as geth reads storage slots and values. */
export function fixedAt(value: unknown, key: string, length: number, fallback?: Hex): Hex {
  if ((value === undefined || value === null) && fallback !== undefined) return fallback;
  const digits = typeof value === 'string' ? value.replace(/^0x/, '') : value;
  const even = typeof digits === 'string' && digits.length % 2 === 1 ? `0${digits}` : digits;
  const bytes = hexToBytes(bytesAt(even, key));
  if (bytes.length > length) throw new GenesisFormatError(key, `expected at most ${length} bytes, got ${bytes.length}`);
  return bytesToHex(padBytes(bytes, length));
}
