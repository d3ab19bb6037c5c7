/**
 * Portable savepoints of an ordered-state instance's private state (spec §2.9, §4.3):
 * operator-created, id-named, exported as a checksummed, versioned archive (media type
 * `application/vnd.node.savepoint`) that seeds a new instance of the same kind and version on a
 * node of the same chain. Stored in `p.<instance>.savepoints` (string id → msgpack record holding
 * the archive bytes); written by the instance's own lane only.
 *
 * Archive layout (all integers big-endian):
 *   magic "CDNSAVEP" (8) ‖ u16 format version (1) ‖ u32 header length ‖ header JSON (UTF-8)
 *   ‖ rows: (u32 key length ‖ key ‖ u32 value length ‖ value)* ‖ sha256 of everything before (32)
 */
import { createHash } from 'node:crypto';
import type { StringKeyedRecordTable } from './store.js';
import type { BlockRef } from './chain-types.js';

export const SAVEPOINT_MEDIA_TYPE = 'application/vnd.node.savepoint';
export const SAVEPOINT_FORMAT_VERSION = 1;
const MAGIC = Buffer.from('CDNSAVEP', 'latin1');

/** What a savepoint says about itself: where it may be used and what its state reflects. */
export interface SavepointHeader {
  readonly format: number;
  readonly id: string;
  readonly chainId: number;
  readonly genesisHash: string;
  readonly processor: { readonly id: string; readonly instance: string; readonly kind: string; readonly version: string; readonly changeSchema: string; readonly options: unknown };
  /** The finalized block the state is as of. */
  readonly block: BlockRef;
  /** The state reflects every block from here through `block`, gap-free (null: it does not, e.g. coverage with gaps). */
  readonly stateFrom: number | null;
  readonly rowCount: number;
  readonly createdAt: string;
}

export interface SavepointRecord {
  readonly id: string;
  readonly createdAt: string;
  readonly blockNumber: number;
  readonly blockHash: string;
  readonly rowCount: number;
  readonly bytes: number;
  /** sha256 of the whole archive, hex (the archive's own trailer checks its body). */
  readonly digest: string;
  readonly archive: Uint8Array;
}

export type SavepointSummary = Omit<SavepointRecord, 'archive'>;

export class SavepointArchiveError extends Error {
  override readonly name = 'SavepointArchiveError';
}

const SAVEPOINT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function isSavepointId(id: string): boolean {
  return SAVEPOINT_ID.test(id);
}

export function encodeSavepoint(header: SavepointHeader, rows: ReadonlyArray<readonly [Uint8Array, Uint8Array]>): Buffer {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const head = Buffer.alloc(14);
  MAGIC.copy(head, 0);
  head.writeUInt16BE(SAVEPOINT_FORMAT_VERSION, 8);
  head.writeUInt32BE(json.length, 10);
  const parts: Buffer[] = [head, json];
  for (const [key, value] of rows) {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(key.length, 0);
    const valueLength = Buffer.alloc(4);
    valueLength.writeUInt32BE(value.length, 0);
    parts.push(length, Buffer.from(key), valueLength, Buffer.from(value));
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash('sha256').update(body).digest()]);
}

/** Parses and checks an archive: magic, format version, checksum, row count. */
export function decodeSavepoint(archive: Uint8Array): { header: SavepointHeader; rows: Array<[Buffer, Buffer]> } {
  const bytes = Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength);
  if (bytes.length < 14 + 32 || !bytes.subarray(0, 8).equals(MAGIC)) throw new SavepointArchiveError('not a savepoint archive (bad magic)');
  const format = bytes.readUInt16BE(8);
  if (format !== SAVEPOINT_FORMAT_VERSION) throw new SavepointArchiveError(`savepoint archive format ${format} is not supported (this node reads format ${SAVEPOINT_FORMAT_VERSION})`);
  const body = bytes.subarray(0, bytes.length - 32);
  if (!createHash('sha256').update(body).digest().equals(bytes.subarray(bytes.length - 32))) throw new SavepointArchiveError('savepoint archive checksum mismatch: the file is damaged');
  const headerLength = body.readUInt32BE(10);
  if (14 + headerLength > body.length) throw new SavepointArchiveError('savepoint archive header overruns the archive');
  let header: SavepointHeader;
  try {
    header = JSON.parse(body.subarray(14, 14 + headerLength).toString('utf8')) as SavepointHeader;
  } catch {
    throw new SavepointArchiveError('savepoint archive header is not JSON');
  }
  if (header.format !== format) throw new SavepointArchiveError(`savepoint archive header says format ${header.format}, its preamble ${format}`);
  const rows: Array<[Buffer, Buffer]> = [];
  let at = 14 + headerLength;
  const take = (): Buffer => {
    if (at + 4 > body.length) throw new SavepointArchiveError('savepoint archive rows are truncated');
    const length = body.readUInt32BE(at);
    if (at + 4 + length > body.length) throw new SavepointArchiveError('savepoint archive rows are truncated');
    const slice = Buffer.from(body.subarray(at + 4, at + 4 + length));
    at += 4 + length;
    return slice;
  };
  while (at < body.length) rows.push([take(), take()]);
  if (rows.length !== header.rowCount) throw new SavepointArchiveError(`savepoint archive holds ${rows.length} rows, its header says ${header.rowCount}`);
  return { header, rows };
}

export function archiveDigest(archive: Uint8Array): string {
  return createHash('sha256').update(archive).digest('hex');
}

export function putSavepoint(table: StringKeyedRecordTable, record: SavepointRecord): void {
  table.put(record.id, record);
}

export function getSavepoint(table: StringKeyedRecordTable, id: string): SavepointRecord | undefined {
  return table.get(id) as SavepointRecord | undefined;
}

export function removeSavepoint(table: StringKeyedRecordTable, id: string): void {
  table.remove(id);
}

export function listSavepoints(table: StringKeyedRecordTable): SavepointSummary[] {
  const list: SavepointSummary[] = [];
  for (const { value } of table.getRange({})) {
    const { archive: _archive, ...summary } = value as SavepointRecord;
    list.push(summary);
  }
  return list;
}
