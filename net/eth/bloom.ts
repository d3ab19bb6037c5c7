/**
 * The 2048-bit logs bloom: for the address and each topic of every log, three bits chosen by the first three
 * 11-bit big-endian pairs of its keccak256 hash.
 */
import { bytesToHex, hexToBytes, type Hex } from './hex.js';
import { keccak256 } from './keccak.js';
import type { Log } from './log.js';

export const BLOOM_BYTES = 256;
export const EMPTY_BLOOM: Hex = bytesToHex(new Uint8Array(BLOOM_BYTES));

function addToBloom(bloom: Uint8Array, value: Uint8Array): void {
  const hash = keccak256(value);
  for (let i = 0; i < 6; i += 2) {
    const bit = ((hash[i]! << 8) | hash[i + 1]!) & 2047;
    bloom[BLOOM_BYTES - 1 - (bit >> 3)]! |= 1 << (bit & 7);
  }
}

export function logsBloomBytes(logs: readonly Log[]): Uint8Array {
  const bloom = new Uint8Array(BLOOM_BYTES);
  for (const log of logs) {
    addToBloom(bloom, hexToBytes(log.address));
    for (const topic of log.topics) addToBloom(bloom, hexToBytes(topic));
  }
  return bloom;
}

export function logsBloom(logs: readonly Log[]): Hex {
  return bytesToHex(logsBloomBytes(logs));
}

/** Bitwise OR of blooms: a block's bloom is the OR of its receipts' blooms. */
export function combineBlooms(blooms: readonly Hex[]): Hex {
  const out = new Uint8Array(BLOOM_BYTES);
  for (const bloom of blooms) {
    const bytes = hexToBytes(bloom, BLOOM_BYTES);
    for (let i = 0; i < BLOOM_BYTES; i++) out[i]! |= bytes[i]!;
  }
  return bytesToHex(out);
}

/** Whether `value` (an address or topic) may be in the set the bloom summarises; false means certainly absent. */
export function bloomMayContain(bloom: Hex, value: Hex): boolean {
  const bloomBytes = hexToBytes(bloom, BLOOM_BYTES);
  const probe = new Uint8Array(BLOOM_BYTES);
  addToBloom(probe, hexToBytes(value));
  for (let i = 0; i < BLOOM_BYTES; i++) if ((bloomBytes[i]! & probe[i]!) !== probe[i]) return false;
  return true;
}
