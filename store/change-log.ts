/**
 * A processor instance's change log (`p.<instance>.changes`): u64 change sequence → one stored
 * change, rendered once at commit time so the API and SSE serve bytes without re-encoding.
 *
 * Value layout: operation u8 ‖ cursor length u16 ‖ cursor (ASCII base64url) ‖ envelope JSON (UTF-8).
 * Sequences start at 1 and grow by one per change, across reorgs, within one store epoch.
 */
import { decodeU64Key, u64Key } from './keys.js';
import type { BinaryTable } from './env.js';

export type ChangeOperation = 'apply' | 'undo' | 'finalized' | 'reset_required';

const OPERATIONS: readonly ChangeOperation[] = ['apply', 'undo', 'finalized', 'reset_required'];

export interface StoredChange {
  readonly sequence: bigint;
  readonly operation: ChangeOperation;
  readonly cursor: string;
  /** The ChangeEnvelope JSON exactly as served. */
  readonly json: Buffer;
}

export function encodeChangeValue(operation: ChangeOperation, cursor: string, json: Buffer | string): Buffer {
  const bodyLength = typeof json === 'string' ? Buffer.byteLength(json, 'utf8') : json.length;
  const value = Buffer.allocUnsafe(3 + cursor.length + bodyLength);
  value[0] = OPERATIONS.indexOf(operation);
  value.writeUInt16BE(cursor.length, 1);
  value.write(cursor, 3, 'latin1');
  // A string is written in place: no intermediate buffer per change (a block of an erc20 instance has hundreds).
  if (typeof json === 'string') value.write(json, 3 + cursor.length, 'utf8');
  else json.copy(value, 3 + cursor.length);
  return value;
}

export function decodeChangeValue(sequence: bigint, value: Buffer): StoredChange {
  const operation = OPERATIONS[value[0] ?? 255];
  if (!operation) throw new RangeError(`change ${sequence}: unknown operation code ${value[0]}`);
  const cursorLength = value.readUInt16BE(1);
  return { sequence, operation, cursor: value.toString('latin1', 3, 3 + cursorLength), json: value.subarray(3 + cursorLength) };
}

/** Where the envelope JSON starts in a stored value (after operation, cursor length and cursor). */
export function changeJsonOffset(sequence: bigint, value: Uint8Array): number {
  if (value.length < 3) throw new RangeError(`change ${sequence}: a stored value of ${value.length} bytes is too short`);
  const offset = 3 + ((value[1]! << 8) | value[2]!);
  if (offset > value.length) throw new RangeError(`change ${sequence}: its cursor runs past the stored value`);
  return offset;
}

/** Appends one change; call inside the processor's write transaction. */
export function putChange(changes: BinaryTable, sequence: bigint, value: Buffer): void {
  changes.put(u64Key(sequence), value);
}

/** Changes with sequence > `after`, oldest first, at most `limit`. */
export function readChanges(changes: BinaryTable, after: bigint, limit: number): StoredChange[] {
  const result: StoredChange[] = [];
  for (const { key, value } of changes.getRange({ start: u64Key(after + 1n), limit })) {
    result.push(decodeChangeValue(decodeU64Key(key), value));
  }
  return result;
}

/** The highest sequence in the log, or 0n when it is empty. */
export function changeHead(changes: BinaryTable): bigint {
  for (const key of changes.getKeys({ reverse: true, limit: 1 })) return decodeU64Key(key);
  return 0n;
}

/** The lowest retained sequence, or null when the log is empty (everything below was pruned). */
export function changeTail(changes: BinaryTable): bigint | null {
  for (const key of changes.getKeys({ limit: 1 })) return decodeU64Key(key);
  return null;
}

/** One SSE frame for a stored change (spec §4.8): id, event and data lines. */
export function sseFrame(change: StoredChange): Buffer {
  return Buffer.concat([Buffer.from(`id: ${change.cursor}\nevent: ${change.operation}\ndata: `, 'latin1'), change.json, NEWLINES]);
}

const NEWLINES = Buffer.from('\n\n');
