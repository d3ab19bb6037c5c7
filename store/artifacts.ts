/**
 * Processor artifacts (spec §2.9), `p.<instance>.artifacts`: a block's checksummed `map` output, kept apart from
 * entities and delivery. Written by the instance's own lane only; read by listeners. Keys (all start with the u64
 * block number, so a range is one cursor walk):
 *
 *   u64 n ‖ 0x00                      → retained (finalized) artifact record
 *   u64 n ‖ 0x01 ‖ owner kind ‖ id    → an owner's claim on that retained record (empty value)
 *   u64 n ‖ 0x02                      → pending candidate of the instance's applied (not yet finalized) block n
 *   u64 max ‖ "totals"                → usage: retained bytes/count, pending bytes/count, window pruned-through
 *
 * Record: u8 format (1) ‖ block hash (32) ‖ parent hash (32) ‖ u64 timestamp ‖ sha256 of the payload (32) ‖ payload.
 * A retained record lives while any owner claims it; the last released claim deletes it.
 */
import { createHash } from 'node:crypto';
import type { Hex } from './chain-types.js';
import type { BinaryTable } from './store.js';
import { u64Key } from './keys.js';

export const ARTIFACT_MEDIA_TYPE = 'application/vnd.node.processor-artifacts';
/** How payloads are encoded (actors/kinds/sdk/delta-codec.ts); part of every export digest. */
export const ARTIFACT_ENCODING = 'tagged-json/1';

const RETAINED = 0x00;
const CLAIM = 0x01;
const PENDING = 0x02;
const RECORD_FORMAT = 1;
const HEADER_BYTES = 1 + 32 + 32 + 8 + 32;
const TOTALS_KEY = Buffer.concat([Buffer.alloc(8, 0xff), Buffer.from('totals')]);

export type OwnerKind = 'processor' | 'processor_job' | 'operator_pin';
const OWNER_CODES: readonly OwnerKind[] = ['processor', 'processor_job', 'operator_pin'];

export interface ArtifactOwner {
  readonly ownerKind: OwnerKind;
  /** Empty for the processor-instance owner. */
  readonly ownerId: string;
}

export const INSTANCE_OWNER: ArtifactOwner = { ownerKind: 'processor', ownerId: '' };

export interface ArtifactRecord {
  readonly number: number;
  readonly hash: Hex;
  readonly parentHash: Hex;
  readonly timestamp: number;
  /** sha256 of the payload, hex (no prefix). */
  readonly checksum: string;
  readonly payload: Buffer;
  /** Bytes the record occupies (its logical footprint). */
  readonly bytes: number;
}

export interface ArtifactTotals {
  readonly retainedBytes: number;
  readonly retainedCount: number;
  readonly pendingBytes: number;
  readonly pendingCount: number;
  /** Blocks at or below this lost the instance owner's claim to the retention window (-1: none). */
  readonly windowPrunedThrough: number;
}

const EMPTY_TOTALS: ArtifactTotals = { retainedBytes: 0, retainedCount: 0, pendingBytes: 0, pendingCount: 0, windowPrunedThrough: -1 };

function key(number: number, tag: number, rest?: Buffer): Buffer {
  return Buffer.concat([u64Key(number), Buffer.from([tag]), ...(rest ? [rest] : [])]);
}

/** The first key after every key of block `to` (a tag byte is at most 0x02). */
function endAfter(to: number): Buffer {
  return Buffer.concat([u64Key(to), Buffer.from([0xff])]);
}

function ownerSuffix(owner: ArtifactOwner): Buffer {
  return Buffer.concat([Buffer.from([OWNER_CODES.indexOf(owner.ownerKind)]), Buffer.from(owner.ownerId, 'utf8')]);
}

export function payloadChecksum(payload: Uint8Array): string {
  return createHash('sha256').update(payload).digest('hex');
}

export function encodeArtifact(block: { number: number; hash: Hex; parentHash: Hex; timestamp: number }, payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  out[0] = RECORD_FORMAT;
  Buffer.from(block.hash.slice(2), 'hex').copy(out, 1);
  Buffer.from(block.parentHash.slice(2), 'hex').copy(out, 33);
  out.writeBigUInt64BE(BigInt(block.timestamp), 65);
  createHash('sha256').update(payload).digest().copy(out, 73);
  payload.copy(out, HEADER_BYTES);
  return out;
}

/** Decodes a record and checks its payload against its checksum (a mismatch is store corruption). */
export function decodeArtifact(number: number, bytes: Buffer): ArtifactRecord {
  if (bytes.length < HEADER_BYTES || bytes[0] !== RECORD_FORMAT) throw new Error(`artifact of block ${number}: unknown record format`);
  const payload = bytes.subarray(HEADER_BYTES);
  const checksum = bytes.subarray(73, HEADER_BYTES).toString('hex');
  if (payloadChecksum(payload) !== checksum) throw new Error(`artifact of block ${number}: payload does not match its checksum`);
  return {
    number,
    hash: `0x${bytes.subarray(1, 33).toString('hex')}`,
    parentHash: `0x${bytes.subarray(33, 65).toString('hex')}`,
    timestamp: Number(bytes.readBigUInt64BE(65)),
    checksum,
    payload: Buffer.from(payload),
    bytes: bytes.length,
  };
}

export function readTotals(table: BinaryTable): ArtifactTotals {
  const bytes = table.getBinary(TOTALS_KEY);
  if (!bytes) return EMPTY_TOTALS;
  return {
    retainedBytes: Number(bytes.readBigUInt64BE(0)), retainedCount: Number(bytes.readBigUInt64BE(8)),
    pendingBytes: Number(bytes.readBigUInt64BE(16)), pendingCount: Number(bytes.readBigUInt64BE(24)),
    windowPrunedThrough: Number(bytes.readBigInt64BE(32)),
  };
}

function writeTotals(table: BinaryTable, totals: ArtifactTotals): void {
  const out = Buffer.alloc(40);
  out.writeBigUInt64BE(BigInt(totals.retainedBytes), 0);
  out.writeBigUInt64BE(BigInt(totals.retainedCount), 8);
  out.writeBigUInt64BE(BigInt(totals.pendingBytes), 16);
  out.writeBigUInt64BE(BigInt(totals.pendingCount), 24);
  out.writeBigInt64BE(BigInt(totals.windowPrunedThrough), 32);
  table.put(TOTALS_KEY, out);
}

function adjust(table: BinaryTable, change: Partial<Record<keyof ArtifactTotals, number>>): ArtifactTotals {
  const totals = readTotals(table);
  const next = {
    retainedBytes: totals.retainedBytes + (change.retainedBytes ?? 0), retainedCount: totals.retainedCount + (change.retainedCount ?? 0),
    pendingBytes: totals.pendingBytes + (change.pendingBytes ?? 0), pendingCount: totals.pendingCount + (change.pendingCount ?? 0),
    windowPrunedThrough: change.windowPrunedThrough ?? totals.windowPrunedThrough,
  };
  writeTotals(table, next);
  return next;
}

/** Writes (or replaces) the pending candidate of block n. */
export function putPending(table: BinaryTable, number: number, record: Buffer): void {
  const previous = table.getBinary(key(number, PENDING));
  table.put(key(number, PENDING), record);
  adjust(table, { pendingBytes: record.length - (previous?.length ?? 0), pendingCount: previous ? 0 : 1 });
}

/** Drops the pending candidate of block n (an undo), if any. */
export function dropPending(table: BinaryTable, number: number): void {
  const previous = table.getBinary(key(number, PENDING));
  if (!previous) return;
  table.remove(key(number, PENDING));
  adjust(table, { pendingBytes: -previous.length, pendingCount: -1 });
}

/** Retains a finalized record for `owners` (a record already retained keeps its bytes and gains the claims). */
export function putRetained(table: BinaryTable, number: number, record: Buffer, owners: readonly ArtifactOwner[]): void {
  if (!table.getBinary(key(number, RETAINED))) {
    table.put(key(number, RETAINED), record);
    adjust(table, { retainedBytes: record.length, retainedCount: 1 });
  }
  for (const owner of owners) table.put(key(number, CLAIM, ownerSuffix(owner)), Buffer.alloc(0));
}

/** Pending candidates of blocks `from`..`through` (newly final) become retained records owned by the instance; returns how many. */
export function promotePending(table: BinaryTable, from: number, through: number, windowFloor: number | null): number {
  let promoted = 0;
  const found: Array<{ number: number; record: Buffer }> = [];
  for (const { key: k, value } of table.getRange({ start: u64Key(from), end: endAfter(through) })) {
    if (k.length === 9 && k[8] === PENDING) found.push({ number: Number(k.readBigUInt64BE(0)), record: Buffer.from(value) });
  }
  for (const { number, record } of found) {
    table.remove(key(number, PENDING));
    adjust(table, { pendingBytes: -record.length, pendingCount: -1 });
    // Already outside the window when it became final: nothing claims it.
    if (windowFloor !== null && number < windowFloor) continue;
    putRetained(table, number, record, [INSTANCE_OWNER]);
    promoted += 1;
  }
  return promoted;
}

/** The claims on block n's record. */
export function claimsOf(table: BinaryTable, number: number): ArtifactOwner[] {
  const owners: ArtifactOwner[] = [];
  const prefix = key(number, CLAIM);
  for (const k of table.getKeys({ start: prefix, end: key(number, CLAIM + 1) })) {
    owners.push({ ownerKind: OWNER_CODES[k[9]!] ?? 'processor', ownerId: k.subarray(10).toString('utf8') });
  }
  return owners;
}

export interface ReleaseResult {
  readonly released: number;
  readonly deleted: number;
  readonly freedBytes: number;
}

/** Releases `owner`'s claims on [from, to]; a record left with no claim is deleted. */
export function releaseClaims(table: BinaryTable, owner: ArtifactOwner, from: number, to: number): ReleaseResult {
  const suffix = ownerSuffix(owner);
  const claimed: number[] = [];
  for (const k of table.getKeys({ start: u64Key(from), end: endAfter(to) })) {
    if (k.length === 9 + suffix.length && k[8] === CLAIM && k.subarray(9).equals(suffix)) claimed.push(Number(k.readBigUInt64BE(0)));
  }
  let deleted = 0;
  let freedBytes = 0;
  for (const number of claimed) {
    table.remove(key(number, CLAIM, suffix));
    if (claimsOf(table, number).length > 0) continue;
    const record = table.getBinary(key(number, RETAINED));
    if (!record) continue;
    table.remove(key(number, RETAINED));
    adjust(table, { retainedBytes: -record.length, retainedCount: -1 });
    deleted += 1;
    freedBytes += record.length;
  }
  return { released: claimed.length, deleted, freedBytes };
}

/** Adds `owner`'s claim to every retained record in [from, to]; returns how many records it now claims. */
export function addClaims(table: BinaryTable, owner: ArtifactOwner, from: number, to: number): number {
  const numbers: number[] = [];
  for (const k of table.getKeys({ start: u64Key(from), end: endAfter(to) })) if (k.length === 9 && k[8] === RETAINED) numbers.push(Number(k.readBigUInt64BE(0)));
  for (const number of numbers) table.put(key(number, CLAIM, ownerSuffix(owner)), Buffer.alloc(0));
  return numbers.length;
}

/** Window retention: the instance owner's claims below `floor` are released (once per block; other owners keep theirs). */
export function pruneWindow(table: BinaryTable, floor: number): ReleaseResult {
  const totals = readTotals(table);
  if (floor - 1 <= totals.windowPrunedThrough) return { released: 0, deleted: 0, freedBytes: 0 };
  const result = releaseClaims(table, INSTANCE_OWNER, totals.windowPrunedThrough + 1, floor - 1);
  adjust(table, { windowPrunedThrough: floor - 1 });
  return result;
}

export function getRetained(table: BinaryTable, number: number): ArtifactRecord | undefined {
  const bytes = table.getBinary(key(number, RETAINED));
  return bytes ? decodeArtifact(number, Buffer.from(bytes)) : undefined;
}

/** Retained records with block numbers in [from, to], ascending, at most `limit`. */
export function* retainedRange(table: BinaryTable, from: number, to: number, limit: number): Generator<ArtifactRecord> {
  let yielded = 0;
  for (const { key: k, value } of table.getRange({ start: u64Key(from), end: endAfter(to) })) {
    if (k.length !== 9 || k[8] !== RETAINED) continue;
    if (yielded >= limit) return;
    yielded += 1;
    yield decodeArtifact(Number(k.readBigUInt64BE(0)), Buffer.from(value));
  }
}

/** The lowest and highest retained block, or null when none is retained. */
export function retainedBounds(table: BinaryTable): { fromBlock: number; toBlock: number } | null {
  let fromBlock: number | null = null;
  for (const k of table.getKeys({ start: u64Key(0), end: TOTALS_KEY })) {
    if (k.length === 9 && k[8] === RETAINED) { fromBlock = Number(k.readBigUInt64BE(0)); break; }
  }
  if (fromBlock === null) return null;
  for (const k of table.getKeys({ start: TOTALS_KEY, reverse: true })) {
    if (k.equals(TOTALS_KEY)) continue;
    if (k.length === 9 && k[8] === RETAINED) return { fromBlock, toBlock: Number(k.readBigUInt64BE(0)) };
  }
  return { fromBlock, toBlock: fromBlock };
}

/** Retained plus pending bytes and pending count of the instances' tables (the `[budgets.artifacts]` usage). */
export function usageOf(tables: readonly BinaryTable[]): { bytes: number; pending: number } {
  let bytes = 0;
  let pending = 0;
  for (const table of tables) {
    const totals = readTotals(table);
    bytes += totals.retainedBytes + totals.pendingBytes;
    pending += totals.pendingCount;
  }
  return { bytes, pending };
}
