/**
 * The 2048-bit logs bloom: for the address and each topic of every log, three bits chosen by the first three
 * 11-bit big-endian pairs of its keccak256 hash.
 */
import { bytesToHex, hexToBytes, type Hex } from './hex.js';
import { keccak256 } from './keccak.js';
import type { HashPlan } from './keccak-batch.js';
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
/** For each cache slot whose value's hash is still planned: its `dest` + 1 (0 = its bits are in `cachedBits`). */
const pendingDest = new Int32Array(CACHE_SLOTS);
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
  let hit = cachedLengths[slot] === length && pendingDest[slot] === 0;
  for (let i = 0; hit && i < length; i++) hit = cachedValues[base + i] === bytes[start + i];
  if (!hit) {
    writeBits(bytes.subarray(start, end), cachedBits, slot * 3);
    cachedValues.set(bytes.subarray(start, end), base);
    cachedLengths[slot] = length;
    pendingDest[slot] = 0;
  }
  setBits(bloom, cachedBits, slot * 3);
  if (alsoInto !== undefined) setBits(alsoInto, cachedBits, slot * 3);
}

/**
 * Bloom values whose hash is planned in a `HashPlan` rather than computed on the spot (`addBytesToBloomPlanned`):
 * each entry is a bloom (a view) whose bits wait for the hash at `dest`, and the cache slot the value took (-1 when
 * it took none). `resolve` sets the bits once the plan has run; `abandon` forgets entries whose plan never ran.
 */
export class PlannedBloomBits {
  private blooms: Uint8Array[] = [];
  private alsoInto: (Uint8Array | undefined)[] = [];
  private dests: number[] = [];
  private slots: number[] = [];

  add(bloom: Uint8Array, alsoInto: Uint8Array | undefined, dest: number, slot: number): void {
    this.blooms.push(bloom);
    this.alsoInto.push(alsoInto);
    this.dests.push(dest);
    this.slots.push(slot);
  }

  /** Sets every waiting bloom's bits from the hashes in `arena` and completes the cache slots they took. */
  resolve(arena: Uint8Array): void {
    for (let i = 0; i < this.dests.length; i++) {
      const dest = this.dests[i]!;
      const slot = this.slots[i]!;
      for (let j = 0; j < 3; j++) uncachedBits[j] = ((arena[dest + 2 * j]! << 8) | arena[dest + 2 * j + 1]!) & 2047;
      setBits(this.blooms[i]!, uncachedBits, 0);
      const also = this.alsoInto[i];
      if (also !== undefined) setBits(also, uncachedBits, 0);
      if (slot >= 0 && pendingDest[slot] === dest + 1) {
        cachedBits.set(uncachedBits, slot * 3);
        pendingDest[slot] = 0;
      }
    }
    this.clear();
  }

  /** Drops the waiting entries (their plan did not run) and empties the cache slots they took. */
  abandon(): void {
    for (let i = 0; i < this.slots.length; i++) {
      const slot = this.slots[i]!;
      if (slot >= 0 && pendingDest[slot] === this.dests[i]! + 1) {
        pendingDest[slot] = 0;
        cachedLengths[slot] = 0;
      }
    }
    this.clear();
  }

  private clear(): void {
    this.blooms.length = 0;
    this.alsoInto.length = 0;
    this.dests.length = 0;
    this.slots.length = 0;
  }
}

/**
 * `addBytesToBloom` with the keccak256 of a value the cache lacks planned in `plan` (level 0) instead of computed
 * now: its bits are set by `planned.resolve(plan.arena)` after `plan.run()`. A value seen again before that waits for
 * the same hash. Exact as before: a slot only ever answers for the very same bytes.
 */
export function addBytesToBloomPlanned(
  plan: HashPlan, planned: PlannedBloomBits, bloom: Uint8Array, bytes: Uint8Array, start: number, end: number, alsoInto?: Uint8Array,
): void {
  const length = end - start;
  if (length === 0 || length > CACHE_VALUE_BYTES) {
    planned.add(bloom, alsoInto, plan.hashOfRange(bytes, start, end), -1);
    return;
  }
  const slot = slotOf(bytes, start, end);
  const base = slot * CACHE_VALUE_BYTES;
  let hit = cachedLengths[slot] === length;
  for (let i = 0; hit && i < length; i++) hit = cachedValues[base + i] === bytes[start + i];
  if (hit) {
    const pending = pendingDest[slot]!;
    if (pending === 0) {
      setBits(bloom, cachedBits, slot * 3);
      if (alsoInto !== undefined) setBits(alsoInto, cachedBits, slot * 3);
    } else {
      planned.add(bloom, alsoInto, pending - 1, -1);
    }
    return;
  }
  const dest = plan.hashOfRange(bytes, start, end);
  for (let i = 0; i < length; i++) cachedValues[base + i] = bytes[start + i]!;
  cachedLengths[slot] = length;
  pendingDest[slot] = dest + 1;
  planned.add(bloom, alsoInto, dest, slot);
}
