/**
 * A processor instance's change log (`p.<instance>.changes`). Sequences start at 1 and grow by one per
 * change, across reorgs, within one store epoch; the log is dense from its tail to its head.
 *
 * Entries are keyed by u64 sequence. Two value formats:
 *
 * - **Group** (what lanes write): the changes of one block that share operation, finality, origin and
 *   emission time, keyed by the first one's sequence. Only the facts are kept — the block, the kinds,
 *   and each change's kind, key and payload JSON — and the envelope and its cursor are rendered where
 *   the log is read. A commit of an erc20 block with hundreds of changes is one put of its facts instead
 *   of hundreds of rendered envelopes (rendering and a cursor checksum per change were ~40 % of the
 *   commit at mainnet's density of transfers); a reader renders each change once per read.
 *
 *     0   u8   GROUP_FORMAT (0x80)
 *     1   u8   operation code (OPERATIONS)
 *     2   u8   finality code (FINALITIES)
 *     3   u8   origin kind code (ORIGIN_KINDS)
 *     4   u32  number of changes
 *     8   u32  length H of the header JSON
 *     12  H    header JSON: {block, schema, emittedAt, originId, kinds}
 *     then per change: u8 kind index ‖ u32 key length (NULL_LENGTH: null) ‖ key (UTF-8)
 *                      ‖ u32 payload length (NULL_LENGTH: null) ‖ payload JSON (UTF-8)
 *
 * - **Single** (written by earlier versions; still read, and written by tools that build logs by hand):
 *   operation u8 (0–3) ‖ cursor length u16 ‖ cursor (ASCII base64url) ‖ envelope JSON (UTF-8), rendered
 *   once at commit time with the epoch of that time (store/epoch-rotation.ts re-mints it).
 *
 * Readers go through `readChanges`/`readChange`/`changeEntries` with the log's identity (`ChangeLog`):
 * the epoch, chain and instance (or subscription stream) a rendered cursor names.
 */
import { encodeCursor, cursorBlockNumber } from './cursor.js';
import type { Finality } from './coverage.js';
import type { BinaryTable } from './env.js';
import { decodeU64Key, u64Key } from './keys.js';
import { groupRender, type ChangeOperation, type EnvelopeBlock } from './change-envelope.js';

export type { ChangeOperation } from './change-envelope.js';

const OPERATIONS: readonly ChangeOperation[] = ['apply', 'undo', 'finalized', 'reset_required'];
const FINALITIES: readonly Finality[] = ['preview', 'included', 'finalized'];
export type OriginKind = 'live' | 'live_recovery' | 'historical_backfill' | 'recompute';
const ORIGIN_KINDS: readonly OriginKind[] = ['live', 'live_recovery', 'historical_backfill', 'recompute'];
const GROUP_FORMAT = 0x80;
const GROUP_HEAD_BYTES = 12;
const NULL_LENGTH = 0xffffffff;
/** Changes per group at most: a block with more is written as several groups (bounded values and reads). */
export const GROUP_MAX_CHANGES = 4096;

/** Where a log lives and whose cursors it renders. */
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
  readonly originKind?: OriginKind;
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

/** Encodes a group of changes (1 to GROUP_MAX_CHANGES) that share `head`. */
export function encodeChangeGroup(head: ChangeGroupHead, changes: readonly GroupedChange[]): Buffer {
  if (changes.length === 0 || changes.length > GROUP_MAX_CHANGES) throw new RangeError(`a change group holds 1 to ${GROUP_MAX_CHANGES} changes, got ${changes.length}`);
  const kinds: string[] = [];
  const kindIndex = new Map<string, number>();
  for (const change of changes) {
    if (!kindIndex.has(change.kind)) {
      kindIndex.set(change.kind, kinds.length);
      kinds.push(change.kind);
    }
  }
  if (kinds.length > 256) throw new RangeError(`a change group holds at most 256 kinds, got ${kinds.length}`);
  const { number, hash, parentHash, timestamp } = head.block;
  const header = JSON.stringify({ block: { number, hash, parentHash, timestamp }, schema: head.schema, emittedAt: head.emittedAt, originId: head.originId ?? null, kinds });
  // UTF-8 takes at most 3 bytes per UTF-16 unit: enough room for any content before writing.
  let room = GROUP_HEAD_BYTES + header.length * 3;
  for (const change of changes) room += 9 + (change.key?.length ?? 0) * 3 + (change.dataJson?.length ?? 0) * 3;
  if (scratch.length < room) scratch = Buffer.allocUnsafe(Math.max(room, scratch.length * 2));
  const out = scratch;
  out[0] = GROUP_FORMAT;
  out[1] = OPERATIONS.indexOf(head.operation);
  out[2] = FINALITIES.indexOf(head.finality);
  out[3] = ORIGIN_KINDS.indexOf(head.originKind ?? 'live');
  out.writeUInt32BE(changes.length, 4);
  const headerBytes = out.write(header, GROUP_HEAD_BYTES, 'utf8');
  out.writeUInt32BE(headerBytes, 8);
  let at = GROUP_HEAD_BYTES + headerBytes;
  for (const change of changes) {
    out[at] = kindIndex.get(change.kind)!;
    at = writeText(out, at + 1, change.key);
    at = writeText(out, at, change.dataJson);
  }
  return Buffer.from(out.subarray(0, at));
}

function writeText(out: Buffer, at: number, text: string | null): number {
  if (text === null) {
    out.writeUInt32BE(NULL_LENGTH, at);
    return at + 4;
  }
  const length = out.write(text, at + 4, 'utf8');
  out.writeUInt32BE(length, at);
  return at + 4 + length;
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
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  const { operation, cursorLength } = singleHead(sequence, bytes);
  const cursor = bytes.toString('latin1', 3, 3 + cursorLength);
  return { sequence, operation, cursor, json: Buffer.from(bytes.subarray(3 + cursorLength)), blockNumber: cursorBlockNumber(cursor) };
}

interface GroupHeader {
  readonly block: EnvelopeBlock;
  readonly schema: string;
  readonly emittedAt: string;
  readonly originId: string | null;
  readonly kinds: readonly string[];
}

/**
 * Called with each change read, in order; the envelope JSON is a string (a group's change, rendered now)
 * or a view into the stored value (a single change; valid until the next read). Returns false to stop.
 */
export type ChangeVisitor = (sequence: bigint, operation: ChangeOperation, cursor: string, json: string | Buffer, blockNumber: number | null) => boolean;

/**
 * Visits the changes of a stored value whose first sequence is `first`, rendered with `log`'s cursors,
 * from sequence `from` on. Returns false when the visitor stopped.
 */
export function visitStored(log: Omit<ChangeLog, 'changes'>, first: bigint, value: Uint8Array, from: bigint, visit: ChangeVisitor): boolean {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (bytes[0] !== GROUP_FORMAT) {
    if (first < from) return true;
    const { operation, cursorLength } = singleHead(first, bytes);
    const cursor = bytes.toString('latin1', 3, 3 + cursorLength);
    return visit(first, operation, cursor, bytes.subarray(3 + cursorLength), cursorBlockNumber(cursor));
  }
  const count = storedChangeCount(bytes);
  const operation = OPERATIONS[bytes[1]!];
  const finality = FINALITIES[bytes[2]!];
  const originKind = ORIGIN_KINDS[bytes[3]!];
  if (!operation || !finality || !originKind) throw new RangeError(`change group at ${first}: unknown operation, finality or origin code`);
  const headerLength = bytes.readUInt32BE(8);
  const header = JSON.parse(bytes.toString('utf8', GROUP_HEAD_BYTES, GROUP_HEAD_BYTES + headerLength)) as GroupHeader;
  const block = header.block;
  const cursorBlock = { number: block.number, hash: block.hash };
  const renderChange = groupRender({ operation, finality, block, schema: header.schema, emittedAt: header.emittedAt, originKind, ...(header.originId === null ? {} : { originId: header.originId }) }, log.chainId);
  let at = GROUP_HEAD_BYTES + headerLength;
  for (let index = 0; index < count; index += 1) {
    const sequence = first + BigInt(index);
    const kind = header.kinds[bytes[at]!];
    if (kind === undefined) throw new RangeError(`change group at ${first}: change ${index} names kind ${bytes[at]} of ${header.kinds.length}`);
    if (sequence < from) {
      at = skipText(bytes, skipText(bytes, at + 1, first), first);
      continue;
    }
    const key = readText(bytes, at + 1, first);
    const data = readText(bytes, key.next, first);
    at = data.next;
    const cursor = encodeCursor({ epoch: log.epoch, chainId: log.chainId, instance: log.instance, sequence, block: cursorBlock });
    if (!visit(sequence, operation, cursor, renderChange(sequence, cursor, kind, key.text, data.text), block.number)) return false;
  }
  if (at !== bytes.length) throw new RangeError(`change group at ${first}: ${bytes.length - at} bytes after its ${count} changes`);
  return true;
}

function singleHead(sequence: bigint, bytes: Buffer): { operation: ChangeOperation; cursorLength: number } {
  const operation = OPERATIONS[bytes[0] ?? 255];
  if (!operation) throw new RangeError(`change ${sequence}: unknown operation code ${bytes[0]}`);
  if (bytes.length < 3) throw new RangeError(`change ${sequence}: a stored value of ${bytes.length} bytes is too short`);
  const cursorLength = bytes.readUInt16BE(1);
  if (3 + cursorLength > bytes.length) throw new RangeError(`change ${sequence}: its cursor runs past the stored value`);
  return { operation, cursorLength };
}

function skipText(bytes: Buffer, at: number, first: bigint): number {
  if (at + 4 > bytes.length) throw new RangeError(`change group at ${first}: truncated`);
  const length = bytes.readUInt32BE(at);
  const next = at + 4 + (length === NULL_LENGTH ? 0 : length);
  if (next > bytes.length) throw new RangeError(`change group at ${first}: truncated`);
  return next;
}

function readText(bytes: Buffer, at: number, first: bigint): { text: string | null; next: number } {
  if (at + 4 > bytes.length) throw new RangeError(`change group at ${first}: truncated`);
  const length = bytes.readUInt32BE(at);
  if (length === NULL_LENGTH) return { text: null, next: at + 4 };
  if (at + 4 + length > bytes.length) throw new RangeError(`change group at ${first}: truncated`);
  return { text: bytes.toString('utf8', at + 4, at + 4 + length), next: at + 4 + length };
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
  for (const { key, value } of log.changes.getRange({ start })) {
    if (!visitStored(log, decodeU64Key(key), value, from, visit)) return;
  }
}

/** Changes with sequence > `after`, oldest first, at most `limit`. */
export function readChanges(log: ChangeLog, after: bigint, limit: number): StoredChange[] {
  const result: StoredChange[] = [];
  if (limit <= 0) return result;
  visitChanges(log, after, (sequence, operation, cursor, json, blockNumber) => {
    result.push({ sequence, operation, cursor, json: typeof json === 'string' ? Buffer.from(json, 'utf8') : Buffer.from(json), blockNumber });
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
  const value = changes.getBinary(key);
  return value !== undefined && decodeU64Key(key) + BigInt(storedChangeCount(value)) > sequence;
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

/** Checks that a stored entry decodes (a single change's head; a group's codes, header and every change's fields) and answers its count. */
export function checkStoredEntry(first: bigint, value: Uint8Array): number {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (bytes[0] !== GROUP_FORMAT) {
    singleHead(first, bytes);
    return 1;
  }
  const count = storedChangeCount(bytes);
  if (count === 0) throw new RangeError(`change group at ${first}: holds no change`);
  if (!OPERATIONS[bytes[1]!] || !FINALITIES[bytes[2]!] || !ORIGIN_KINDS[bytes[3]!]) throw new RangeError(`change group at ${first}: unknown operation, finality or origin code`);
  const headerLength = bytes.readUInt32BE(8);
  if (GROUP_HEAD_BYTES + headerLength > bytes.length) throw new RangeError(`change group at ${first}: truncated header`);
  const header = JSON.parse(bytes.toString('utf8', GROUP_HEAD_BYTES, GROUP_HEAD_BYTES + headerLength)) as GroupHeader;
  let at = GROUP_HEAD_BYTES + headerLength;
  for (let index = 0; index < count; index += 1) {
    if (header.kinds[bytes[at]!] === undefined) throw new RangeError(`change group at ${first}: change ${index} names kind ${bytes[at]} of ${header.kinds.length}`);
    at = skipText(bytes, skipText(bytes, at + 1, first), first);
  }
  if (at !== bytes.length) throw new RangeError(`change group at ${first}: ${bytes.length - at} bytes after its ${count} changes`);
  return count;
}

/** A change's facts, without its envelope rendered. */
export interface ChangeFacts {
  readonly sequence: bigint;
  readonly operation: ChangeOperation;
  readonly block: { readonly number: number; readonly hash: string } | null;
  readonly kind: string;
  readonly key: string | null;
  readonly dataJson: string | null;
}

/** Every change of the log from `from` (default its tail) on, oldest first, as facts (no cursor rendered). */
export function* changeFacts(changes: BinaryTable, from = 1n): Generator<ChangeFacts> {
  const start = entryKeyAt(changes, from) ?? u64Key(from);
  for (const { key, value } of changes.getRange({ start })) {
    const first = decodeU64Key(key);
    const bytes = Buffer.from(value);
    if (bytes[0] !== GROUP_FORMAT) {
      if (first < from) continue;
      const { operation, cursorLength } = singleHead(first, bytes);
      const envelope = JSON.parse(bytes.toString('utf8', 3 + cursorLength)) as { block?: { number: number; hash: string } | null; kind?: string; key?: string | null; data?: unknown };
      const block = envelope.block ?? null;
      yield { sequence: first, operation, block: block === null ? null : { number: block.number, hash: block.hash }, kind: envelope.kind ?? '', key: envelope.key ?? null, dataJson: envelope.data === undefined || envelope.data === null ? null : JSON.stringify(envelope.data) };
      continue;
    }
    const count = storedChangeCount(bytes);
    const operation = OPERATIONS[bytes[1]!];
    if (!operation) throw new RangeError(`change group at ${first}: unknown operation code ${bytes[1]}`);
    const headerLength = bytes.readUInt32BE(8);
    const header = JSON.parse(bytes.toString('utf8', GROUP_HEAD_BYTES, GROUP_HEAD_BYTES + headerLength)) as GroupHeader;
    const block = { number: header.block.number, hash: header.block.hash };
    let at = GROUP_HEAD_BYTES + headerLength;
    for (let index = 0; index < count; index += 1) {
      const kind = header.kinds[bytes[at]!];
      if (kind === undefined) throw new RangeError(`change group at ${first}: change ${index} names kind ${bytes[at]} of ${header.kinds.length}`);
      const keyText = readText(bytes, at + 1, first);
      const data = readText(bytes, keyText.next, first);
      at = data.next;
      const sequence = first + BigInt(index);
      if (sequence >= from) yield { sequence, operation, block, kind, key: keyText.text, dataJson: data.text };
    }
  }
}

/** Each stored entry's first sequence and count, oldest first (no rendering). */
export function* changeSpans(changes: BinaryTable, start?: bigint): Generator<{ readonly first: bigint; readonly count: number; readonly key: Buffer }> {
  for (const { key, value } of changes.getRange(start === undefined ? {} : { start: u64Key(start) })) {
    yield { first: decodeU64Key(key), count: storedChangeCount(value), key: key as Buffer };
  }
}

/** The highest sequence in the log, or 0n when it is empty. */
export function changeHead(changes: BinaryTable): bigint {
  for (const { key, value } of changes.getRange({ reverse: true, limit: 1 })) return decodeU64Key(key) + BigInt(storedChangeCount(value)) - 1n;
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
