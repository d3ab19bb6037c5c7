/**
 * The JetStream messages of a change log (issue 30, docs/jetstream.md): the changes after a sequence cut into
 * messages of consecutive changes of one block and operation (the log's own groups), each split to stay within
 * a byte bound. A message's payload is, per change, `u8 operation code ‖ u16 cursor length ‖ cursor (ASCII) ‖
 * u32 envelope length ‖ envelope JSON`, the bytes the node itself serves; decodePublication reads it back.
 */
import { cursorBlockNumber } from './cursor.js';
import { visitChanges, type ChangeLog, type ChangeOperation, type StoredChange } from './change-log.js';

const OPERATIONS: readonly ChangeOperation[] = ['apply', 'undo', 'finalized', 'reset_required'];

export interface PublicationMessage {
  readonly first: bigint;
  readonly last: bigint;
  readonly payload: Buffer;
}

/** Up to `maxMessages` messages of the changes after `after`, each at most `maxBytes` (a single larger change stands alone). */
export function publicationMessages(log: ChangeLog, after: bigint, maxBytes: number, maxMessages: number): PublicationMessage[] {
  const messages: PublicationMessage[] = [];
  let parts: Buffer[] = [];
  let bytes = 0;
  let first = 0n;
  let last = 0n;
  let key = '';
  const close = () => {
    if (parts.length > 0) messages.push({ first, last, payload: Buffer.concat(parts, bytes) });
    parts = [];
    bytes = 0;
  };
  visitChanges(log, after, (sequence, operation, cursor, json, blockNumber) => {
    const entryKey = `${operation}:${blockNumber}`;
    const size = 7 + cursor.length + json.length;
    if (parts.length > 0 && (entryKey !== key || bytes + size > maxBytes)) {
      close();
      if (messages.length >= maxMessages) return false;
    }
    if (parts.length === 0) {
      first = sequence;
      key = entryKey;
    }
    const head = Buffer.allocUnsafe(3 + cursor.length);
    head[0] = OPERATIONS.indexOf(operation);
    head.writeUInt16BE(cursor.length, 1);
    head.write(cursor, 3, 'latin1');
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32BE(json.length, 0);
    parts.push(head, length, Buffer.from(json));
    bytes += size;
    last = sequence;
    return true;
  });
  if (messages.length < maxMessages) close();
  return messages;
}

/** The changes of a message's payload whose first change has sequence `first`. */
export function decodePublication(first: bigint, payload: Uint8Array): StoredChange[] {
  const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const changes: StoredChange[] = [];
  for (let at = 0, sequence = first; at < bytes.length; sequence += 1n) {
    const operation = OPERATIONS[bytes[at]!];
    if (!operation || at + 3 > bytes.length) throw new RangeError(`publication at ${first}: bad change ${sequence}`);
    const cursorLength = bytes.readUInt16BE(at + 1);
    const cursor = bytes.toString('latin1', at + 3, at + 3 + cursorLength);
    const jsonAt = at + 3 + cursorLength + 4;
    const next = jsonAt + bytes.readUInt32BE(jsonAt - 4);
    if (next > bytes.length) throw new RangeError(`publication at ${first}: change ${sequence} is truncated`);
    changes.push({ sequence, operation, cursor, json: Buffer.from(bytes.subarray(jsonAt, next)), blockNumber: cursorBlockNumber(cursor) });
    at = next;
  }
  return changes;
}
