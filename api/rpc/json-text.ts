/**
 * JSON text pieces for JSON-RPC answers, built by concatenation: every value is a 0x-hex string, a
 * number or null, so no escaping is ever needed and the bytes come out exactly as an execution
 * client writes them (field order included).
 */
import type { Hex } from '../../net/eth/hex.js';

/** A JSON string of 0x-hex (hashes, data, addresses). */
export const hexString = (hex: Hex | string): string => `"${hex}"`;

/** A JSON-RPC quantity: 0x-hex without leading zeros (`"0x0"` for zero). */
export const quantity = (value: bigint | number): string => `"0x${value.toString(16)}"`;

/** `"name":value` pairs joined into an object; fields whose value is undefined are left out. */
export function object(fields: ReadonlyArray<readonly [string, string | undefined]>): string {
  // join makes one flat string; `+=` would make a rope of cons strings, about three times the heap in the block cache.
  const members: string[] = [];
  for (const [name, value] of fields) if (value !== undefined) members.push(`"${name}":${value}`);
  return `{${members.join(',')}}`;
}

export const array = (items: readonly string[]): string => `[${items.join(',')}]`;
