/**
 * A processor instance's change log (`p.<instance>.changes`). Sequences start at 1 and grow by one per
 * change, across reorgs, within one store epoch; the log is dense from its tail to its head.
 *
 * Entries are keyed by u64 sequence. Two value formats, both holding envelopes rendered once, at commit
 * time, so readers (pages, SSE, consumer batches) copy bytes without re-encoding:
 *
 * - **Group** (what lanes write): the consecutive changes of one block and operation, keyed by the first
 *   one's sequence — one put per block where a per-change entry cost an LMDB put each (an erc20 block
 *   has hundreds of changes). The envelopes are rendered with the fields the group shares laid out once
 *   (store/change-envelope.ts `groupRender`, store/cursor.ts `cursorMinter`).
 *
 *     0   u8   GROUP_FORMAT (0x80)
 *     1   u8   operation code (OPERATIONS)
 *     2   u8   flags: bit 0 = the changes name a block
 *     3   u8   0
 *     4   u32  number of changes
 *     8   u64  block number (0 without a block)
 *     16  per change: u16 cursor length ‖ cursor (ASCII base64url) ‖ u32 envelope length ‖ envelope JSON (UTF-8)
 *
 * - **Single** (written by earlier versions; still read, and written by tools that build logs by hand):
 *   operation u8 (0–3) ‖ cursor length u16 ‖ cursor (ASCII base64url) ‖ envelope JSON (UTF-8).
 *
 * Cursors name the store epoch they were written in; store/epoch-rotation.ts re-mints them in both formats.
 */
import { cursorBlockNumber, cursorMinter } from './cursor.js';
import type { Finality } from './coverage.js';
import type { BinaryTable } from './store.js';
import { decodeU64Key, u64Key } from './keys.js';
import { groupRender, type ChangeOperation, type EnvelopeBlock, type EnvelopeInput } from './change-envelope.js';
import type { BlockRef } from './chain-types.js';

export type { ChangeOperation } from './change-envelope.js';

const OPERATIONS: readonly ChangeOperation[] = ['apply', 'undo', 'finalized', 'reset_required'];
const GROUP_FORMAT = 0x80;
const GROUP_HEAD_BYTES = 16;
const FLAG_BLOCK = 0x01;
/** Changes per group at most: a block with more is written as several groups (bounded values and reads). */
export const GROUP_MAX_CHANGES = 4096;

/** Where a log lives and whose cursors it writes. */
export interface ChangeLog {
  readonly changes: BinaryTable;
  readonly epoch: bigint;
  readonly chainId: number;
  /** The processor instance, or the subscription stream, its cursors name. */
  readonly instance: string;
}

export interface StoredChange {
  readonly sequence: bigint;
  readonly operation: ChangeOperation;
  readonly cursor: string;
  /** The ChangeEnvelope JSON exactly as served. */
  readonly json: Buffer;
  /** The number of the block the change is about, null when it names none. */
  readonly blockNumber: number | null;
}

/** What the changes of one group share. */
export interface ChangeGroupHead {
  readonly operation: ChangeOperation;
  readonly finality: Finality;
  readonly block: EnvelopeBlock;
  readonly schema: string;
  readonly emittedAt: string;
  readonly originKind?: EnvelopeInput['originKind'];
  readonly originId?: string;
}

/** One change of a group: its kind, key and payload (already JSON). */
export interface GroupedChange {
  readonly kind: string;
  readonly key: string | null;
  readonly dataJson: string | null;
}

/** Scratch space the group encoder writes into before one copy out (grown on demand, per thread). */
let scratch = Buffer.allocUnsafe(1 << 20);

/** Makes room for `more` bytes after `at` in the scratch buffer, keeping what it holds. */
function room(at: number, more: number): Buffer {
  if (at + more > scratch.length) {
    const grown = Buffer.allocUnsafe(Math.max(at + more, scratch.length * 2));
    scratch.copy(grown, 0, 0, at);
    scratch = grown;
  }
  return scratch;
}

/**
 * Renders a group of changes (1 to GROUP_MAX_CHANGES) that share `head`, the first at sequence `first`,
 * with the cursors of `log` (its epoch, chain and instance).
 */
export function encodeChangeGroup(log: Omit<ChangeLog, 'changes'>, first: bigint, head: ChangeGroupHead, changes: readonly GroupedChange[]): Buffer {
  if (changes.length === 0 || changes.length > GROUP_MAX_CHANGES) throw new RangeError(`a change group holds 1 to ${GROUP_MAX_CHANGES} changes, got ${changes.length}`);
  const { number, hash, parentHash, timestamp } = head.block;
  const block = { number, hash, parentHash, timestamp };
  const render = groupRender({ operation: head.operation, finality: head.finality, block, schema: head.schema, emittedAt: head.emittedAt, originKind: head.originKind, originId: head.originId }, log.chainId);
  const mint = cursorMinter({ epoch: log.epoch, chainId: log.chainId, instance: log.instance, block: { number, hash } });
  let out = room(0, GROUP_HEAD_BYTES);
  out[0] = GROUP_FORMAT;
  out[1] = OPERATIONS.indexOf(head.operation);
  out[2] = FLAG_BLOCK;
  out[3] = 0;
  out.writeUInt32BE(changes.length, 4);
  out.writeBigUInt64BE(BigInt(number), 8);
  let at = GROUP_HEAD_BYTES;
  let sequence = first;
  for (const change of changes) {
    const cursor = mint(sequence);
    const text = render.head(sequence, cursor, change.kind, change.key);
    const data = change.dataJson ?? 'null';
    // UTF-8 takes at most 3 bytes per UTF-16 unit: room for any content before writing.
    out = room(at, 6 + cursor.length + (text.length + data.length + render.tail.length) * 3);
    out.writeUInt16BE(cursor.length, at);
    at += 2 + out.write(cursor, at + 2, 'latin1');
    const lengthAt = at;
    at += 4;
    at += out.write(text, at, 'utf8');
    at += out.write(data, at, 'utf8');
    at += out.write(render.tail, at, 'utf8');
    out.writeUInt32BE(at - lengthAt - 4, lengthAt);
    sequence += 1n;
  }
  return Buffer.from(out.subarray(0, at));
}

/** Writes a group whose first change is `first`; call inside the write transaction. */
export function putChangeGroup(changes: BinaryTable, first: bigint, value: Buffer): void {
  changes.put(u64Key(first), value);
}

/** A single change as earlier versions stored it (the envelope JSON already rendered with `cursor`). */
export function encodeChangeValue(operation: ChangeOperation, cursor: string, json: Buffer | string): Buffer {
  const bodyLength = typeof json === 'string' ? Buffer.byteLength(json, 'utf8') : json.length;
  const value = Buffer.allocUnsafe(3 + cursor.length + bodyLength);
  value[0] = OPERATIONS.indexOf(operation);
  value.writeUInt16BE(cursor.length, 1);
  value.write(cursor, 3, 'latin1');
  if (typeof json === 'string') value.write(json, 3 + cursor.length, 'utf8');
  else json.copy(value, 3 + cursor.length);
  return value;
}

/** Appends one single change; call inside a write transaction. */
export function putChange(changes: BinaryTable, sequence: bigint, value: Buffer): void {
  changes.put(u64Key(sequence), value);
}

/** Whether a stored value is a group (else a single change). */
export function isChangeGroup(value: Uint8Array): boolean {
  return value[0] === GROUP_FORMAT;
}

/** How many changes a stored value holds. */
export function storedChangeCount(value: Uint8Array): number {
  if (value[0] !== GROUP_FORMAT) return 1;
  if (value.length < GROUP_HEAD_BYTES) throw new RangeError(`a change group of ${value.length} bytes is too short`);
  return ((value[4]! << 24) >>> 0) + ((value[5]! << 16) | (value[6]! << 8) | value[7]!);
}

/** A single change's stored value, decoded (the value must not be a group). */
export function decodeChangeValue(sequence: bigint, value: Uint8Array): StoredChange {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.length);
  const { operation, cursorLength } = singleHead(sequence, bytes);
  const cursor = bytes.toString('latin1', 3, 3 + cursorLength);
  return { sequence, operation, cursor, json: Buffer.from(bytes.subarray(3 + cursorLength)), blockNumber: cursorBlockNumber(cursor) };
}

/**
 * Called with each change read, in order, its envelope JSON a view into the stored value (valid until the
 * next read: copy it out). Returns false to stop.
 */
export type ChangeVisitor = (sequence: bigint, operation: ChangeOperation, cursor: string, json: Buffer, blockNumber: number | null) => boolean;

/**
 * Visits the changes of a stored value whose first sequence is `first`, from sequence `from` on.
 * Returns false when the visitor stopped.
 */
/** `value` may be lmdb-js's shared read buffer, whose `length` (not `byteLength`) is the value's. */
export function visitStored(first: bigint, value: Uint8Array, from: bigint, visit: ChangeVisitor): boolean {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.length);
  if (bytes[0] !== GROUP_FORMAT) {
    if (first < from) return true;
    const { operation, cursorLength } = singleHead(first, bytes);
    const cursor = bytes.toString('latin1', 3, 3 + cursorLength);
    return visit(first, operation, cursor, bytes.subarray(3 + cursorLength), cursorBlockNumber(cursor));
  }
  const { operation, count, blockNumber } = groupHead(first, bytes);
  let at = GROUP_HEAD_BYTES;
  for (let index = 0; index < count; index += 1) {
    const entry = groupEntry(first, bytes, at);
    const sequence = first + BigInt(index);
    if (sequence >= from && !visit(sequence, operation, bytes.toString('latin1', entry.cursorAt, entry.jsonAt - 4), bytes.subarray(entry.jsonAt, entry.next), blockNumber)) return false;
    at = entry.next;
  }
  if (at !== bytes.length) throw new RangeError(`change group at ${first}: ${bytes.length - at} bytes after its ${count} changes`);
  return true;
}

function groupHead(first: bigint, bytes: Buffer): { operation: ChangeOperation; count: number; blockNumber: number | null } {
  if (bytes.length < GROUP_HEAD_BYTES) throw new RangeError(`change group at ${first}: ${bytes.length} bytes is too short`);
  const operation = OPERATIONS[bytes[1]!];
  if (!operation) throw new RangeError(`change group at ${first}: unknown operation code ${bytes[1]}`);
  const count = bytes.readUInt32BE(4);
  if (count === 0) throw new RangeError(`change group at ${first}: holds no change`);
  return { operation, count, blockNumber: (bytes[2]! & FLAG_BLOCK) === 0 ? null : Number(bytes.readBigUInt64BE(8)) };
}

/** Where the change at `at` of a group has its cursor and envelope, and where the next one starts. */
function groupEntry(first: bigint, bytes: Buffer, at: number): { cursorAt: number; jsonAt: number; next: number } {
  if (at + 2 > bytes.length) throw new RangeError(`change group at ${first}: truncated`);
  const cursorAt = at + 2;
  const jsonAt = cursorAt + bytes.readUInt16BE(at) + 4;
  if (jsonAt > bytes.length) throw new RangeError(`change group at ${first}: truncated`);
  const next = jsonAt + bytes.readUInt32BE(jsonAt - 4);
  if (next > bytes.length) throw new RangeError(`change group at ${first}: truncated`);
  return { cursorAt, jsonAt, next };
}

function singleHead(sequence: bigint, bytes: Buffer): { operation: ChangeOperation; cursorLength: number } {
  const operation = OPERATIONS[bytes[0] ?? 255];
  if (!operation) throw new RangeError(`change ${sequence}: unknown operation code ${bytes[0]}`);
  if (bytes.length < 3) throw new RangeError(`change ${sequence}: a stored value of ${bytes.length} bytes is too short`);
  const cursorLength = bytes.readUInt16BE(1);
  if (3 + cursorLength > bytes.length) throw new RangeError(`change ${sequence}: its cursor runs past the stored value`);
  return { operation, cursorLength };
}

/**
 * A group with each change's cursor replaced by `remint(cursor)` (a token of the same length, as a new
 * store epoch gives), in its entry and in its envelope.
 */
export function remintGroup(first: bigint, value: Uint8Array, remint: (cursor: string) => string): Buffer {
  const bytes = Buffer.from(value);
  const { count } = groupHead(first, bytes);
  let at = GROUP_HEAD_BYTES;
  for (let index = 0; index < count; index += 1) {
    const entry = groupEntry(first, bytes, at);
    const cursor = bytes.toString('latin1', entry.cursorAt, entry.jsonAt - 4);
    const next = remint(cursor);
    if (next.length !== cursor.length) throw new RangeError(`change ${first + BigInt(index)}: a re-minted cursor must keep its length`);
    const inJson = bytes.indexOf(`"cursor":"${cursor}"`, entry.jsonAt, 'latin1');
    if (inJson < 0 || inJson >= entry.next) throw new Error(`change ${first + BigInt(index)}: its envelope does not carry its cursor`);
    bytes.write(next, entry.cursorAt, 'latin1');
    bytes.write(next, inJson + 10, 'latin1');
    at = entry.next;
  }
  return bytes;
}

/** The key of the entry holding `sequence` (the greatest key at or below it), or undefined when there is none. */
function entryKeyAt(changes: BinaryTable, sequence: bigint): Buffer | undefined {
  for (const key of changes.getKeys({ start: u64Key(sequence), reverse: true, limit: 1 })) return key as Buffer;
  return undefined;
}

/** Visits the changes with sequence > `after`, oldest first, until the visitor returns false or the log ends. */
export function visitChanges(log: ChangeLog, after: bigint, visit: ChangeVisitor): void {
  const from = after + 1n;
  const start = entryKeyAt(log.changes, from) ?? u64Key(from);
  // Keys only, and each value read into lmdb-js's shared buffer (no copy of a group per read): the
  // visitor copies what it keeps before the next read.
  for (const key of log.changes.getKeys({ start })) {
    const value = log.changes.getBinaryFast(key as Buffer);
    if (value === undefined) continue;
    if (!visitStored(decodeU64Key(key as Buffer), value, from, visit)) return;
  }
}

/** Changes with sequence > `after`, oldest first, at most `limit`. */
export function readChanges(log: ChangeLog, after: bigint, limit: number): StoredChange[] {
  const result: StoredChange[] = [];
  if (limit <= 0) return result;
  visitChanges(log, after, (sequence, operation, cursor, json, blockNumber) => {
    result.push({ sequence, operation, cursor, json: Buffer.from(json), blockNumber });
    return result.length < limit;
  });
  return result;
}

/** The change at `sequence`, or undefined when the log does not hold it. */
export function readChange(log: ChangeLog, sequence: bigint): StoredChange | undefined {
  if (sequence <= 0n) return undefined;
  const change = readChanges(log, sequence - 1n, 1)[0];
  return change?.sequence === sequence ? change : undefined;
}

/** Whether the log holds the change at `sequence`. */
export function holdsChange(changes: BinaryTable, sequence: bigint): boolean {
  const key = entryKeyAt(changes, sequence);
  if (key === undefined) return false;
  return decodeU64Key(key) + BigInt(countAt(changes, key)) > sequence;
}

/** Every change of the log from `from` (default its tail) on, oldest first, read a page at a time. */
export function* changeEntries(log: ChangeLog, from = 1n): Generator<StoredChange> {
  let after = from - 1n;
  for (;;) {
    const page = readChanges(log, after, 1024);
    yield* page;
    if (page.length < 1024) return;
    after = page[page.length - 1]!.sequence;
  }
}

/** Checks that a stored entry decodes (a single change's head; a group's head and every change's bounds) and answers its count. */
export function checkStoredEntry(first: bigint, value: Uint8Array): number {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.length);
  if (bytes[0] !== GROUP_FORMAT) {
    singleHead(first, bytes);
    return 1;
  }
  const { count } = groupHead(first, bytes);
  let at = GROUP_HEAD_BYTES;
  for (let index = 0; index < count; index += 1) at = groupEntry(first, bytes, at).next;
  if (at !== bytes.length) throw new RangeError(`change group at ${first}: ${bytes.length - at} bytes after its ${count} changes`);
  return count;
}

/** A change's facts, without its envelope rendered. */
export interface ChangeFacts {
  readonly sequence: bigint;
  readonly operation: ChangeOperation;
  readonly block: BlockRef | null;
  readonly kind: string;
  readonly key: string | null;
  readonly dataJson: string | null;
}

/** Every change of the log from `from` (default its tail) on, oldest first, as facts parsed from its envelope. */
export function* changeFacts(changes: BinaryTable, from = 1n): Generator<ChangeFacts> {
  const start = entryKeyAt(changes, from) ?? u64Key(from);
  for (const { key, value } of changes.getRange({ start })) {
    const facts: ChangeFacts[] = [];
    visitStored(decodeU64Key(key), value, from, (sequence, operation, _cursor, json) => {
      const envelope = JSON.parse(json.toString('utf8')) as { block?: BlockRef | null; kind?: string; key?: string | null; data?: unknown };
      const block = envelope.block ?? null;
      facts.push({
        sequence, operation, block: block === null ? null : { number: block.number, hash: block.hash }, kind: envelope.kind ?? '', key: envelope.key ?? null,
        dataJson: envelope.data === undefined || envelope.data === null ? null : JSON.stringify(envelope.data),
      });
      return true;
    });
    yield* facts;
  }
}

/** How many changes the entry under `key` holds, read in lmdb-js's shared buffer (no copy of a whole group). */
function countAt(changes: BinaryTable, key: Buffer): number {
  const value = changes.getBinaryFast(key);
  return value === undefined ? 0 : storedChangeCount(value);
}

/** Each stored entry's first sequence and count, oldest first (no rendering). */
export function* changeSpans(changes: BinaryTable, start?: bigint): Generator<{ readonly first: bigint; readonly count: number; readonly key: Buffer }> {
  for (const key of changes.getKeys(start === undefined ? {} : { start: u64Key(start) })) {
    yield { first: decodeU64Key(key as Buffer), count: countAt(changes, key as Buffer), key: key as Buffer };
  }
}

/** The highest sequence in the log, or 0n when it is empty (read on every page and consumer call: no value copied). */
export function changeHead(changes: BinaryTable): bigint {
  for (const key of changes.getKeys({ reverse: true, limit: 1 })) return decodeU64Key(key as Buffer) + BigInt(countAt(changes, key as Buffer)) - 1n;
  return 0n;
}

/** The lowest retained sequence, or null when the log is empty (everything below was pruned). */
export function changeTail(changes: BinaryTable): bigint | null {
  for (const key of changes.getKeys({ limit: 1 })) return decodeU64Key(key);
  return null;
}

/** One SSE frame for a change (spec §4.8): id, event and data lines. */
export function sseFrame(change: StoredChange): Buffer {
  return Buffer.concat([Buffer.from(`id: ${change.cursor}\nevent: ${change.operation}\ndata: `, 'latin1'), change.json, NEWLINES]);
}

const NEWLINES = Buffer.from('\n\n');
