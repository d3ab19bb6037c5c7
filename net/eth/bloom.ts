/**
 * The 2048-bit logs bloom: for the address and each topic of every log, three bits chosen by the first three
 * 11-bit big-endian pairs of its keccak256 hash.
 */
import { bytesToHex, hexToBytes, type Hex } from './hex.js';
import { keccak256 } from './keccak.js';
import { bloomBitsNative } from './keccak-batch.js';
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

/**
 * The bloom bit indexes of recently seen values (addresses and topics repeat heavily: a token's address, the
 * Transfer topic, busy accounts), so most values skip their keccak256. Direct-mapped and fixed in size: slot
 * `hash(value) mod SLOTS` holds one value's bytes and its three 11-bit bit indexes, and a hit requires every byte
 * to be equal, so the cache can only ever return the indexes of the very same value.
 */
const CACHE_SLOTS = 4096;
const CACHE_VALUE_BYTES = 32;
const cachedValues = new Uint8Array(CACHE_SLOTS * CACHE_VALUE_BYTES);
/** Length of the value in each slot; 0 = empty (values of 1…32 bytes are cached). */
const cachedLengths = new Uint8Array(CACHE_SLOTS);
/** The three bit indexes (0…2047) of each slot's value. */
const cachedBits = new Uint16Array(CACHE_SLOTS * 3);
/** Where `bitsOf` puts the bit indexes of a value it does not cache. */
const uncachedBits = new Uint16Array(3);

/** From the last bytes (hashes, addresses and left-padded topics all vary there) and the first; collisions only evict. */
function slotOf(bytes: Uint8Array, start: number, end: number): number {
  const hash = Math.imul(bytes[end - 1]! | (bytes[end - 2]! << 8) | (bytes[start]! << 16) | ((end - start) << 24), 0x9e3779b1);
  return (hash >>> 20) & (CACHE_SLOTS - 1);
}

function writeBits(value: Uint8Array, out: Uint16Array, offset: number): void {
  const hash = keccak256(value);
  for (let i = 0; i < 3; i++) out[offset + i] = ((hash[2 * i]! << 8) | hash[2 * i + 1]!) & 2047;
}

function setBits(bloom: Uint8Array, bits: Uint16Array, offset: number): void {
  for (let i = offset; i < offset + 3; i++) {
    const bit = bits[i]!;
    bloom[BLOOM_BYTES - 1 - (bit >> 3)]! |= 1 << (bit & 7);
  }
}

/**
 * Sets the bloom bits of one raw address or topic (`bytes[start…end)`), exactly as `addToBloom` does for a value,
 * in `bloom` and, when given, in `alsoInto` too (a block bloom built alongside its receipts' blooms).
 */
export function addBytesToBloom(bloom: Uint8Array, bytes: Uint8Array, start: number, end: number, alsoInto?: Uint8Array): void {
  const length = end - start;
  if (length === 0 || length > CACHE_VALUE_BYTES) {
    writeBits(bytes.subarray(start, end), uncachedBits, 0);
    setBits(bloom, uncachedBits, 0);
    if (alsoInto !== undefined) setBits(alsoInto, uncachedBits, 0);
    return;
  }
  const slot = slotOf(bytes, start, end);
  const base = slot * CACHE_VALUE_BYTES;
  let hit = cachedLengths[slot] === length;
  for (let i = 0; hit && i < length; i++) hit = cachedValues[base + i] === bytes[start + i];
  if (!hit) {
    writeBits(bytes.subarray(start, end), cachedBits, slot * 3);
    cachedValues.set(bytes.subarray(start, end), base);
    cachedLengths[slot] = length;
  }
  setBits(bloom, cachedBits, slot * 3);
  if (alsoInto !== undefined) setBits(alsoInto, cachedBits, slot * 3);
}

/**
 * Sets the bloom bits of `count` raw values (addresses and topics) of `bytes`: value k is `values[3k … 3k+2]` =
 * `[start, length, bloom]`, its bits set in `blooms[bloom, bloom+256)` and in `blockBloom`. Hashed in one native
 * batch straight from `bytes` (8 values at once with AVX-512) where the Keccak addon is in use, else value by value
 * through the cache above.
 */
export function addValuesToBlooms(bytes: Uint8Array, values: Uint32Array, count: number, blooms: Uint8Array, blockBloom: Uint8Array): void {
  if (count === 0 || bloomBitsNative(bytes, values, count, blooms, blockBloom)) return;
  for (let k = 0; k < count; k++) {
    const start = values[3 * k]!, bloom = values[3 * k + 2]!;
    addBytesToBloom(blooms.subarray(bloom, bloom + BLOOM_BYTES), bytes, start, start + values[3 * k + 1]!, blockBloom);
  }
}
