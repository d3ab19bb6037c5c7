/**
 * Query-and-follow snapshots (spec §2.7, §4.4 rules 5–7): a record per snapshot in `snapshots`
 * (string id → msgpack SnapshotRecord) and its materialized rows in `snapshot.rows`
 * (12-byte id ‖ u32 ordinal → entity result JSON bytes).
 *
 * Why materialize: an LMDB read transaction cannot outlive the process, and entity rows are updated
 * in place (a finality advance rewrites a row, a reorg deletes one), so "the same snapshot across
 * restart" needs its own durable copy. The copy is written in the same transaction that reads the
 * rows and the change boundary, bounded by configured row and byte limits, and swept at expiry.
 * Written only by the `snapshots` lane; listeners read pages straight from the memory map.
 */
import type { BinaryTable, StringKeyedRecordTable } from './store.js';

export const SNAPSHOT_ID_BYTES = 12;
const ROW_KEY_BYTES = SNAPSHOT_ID_BYTES + 4;

export type SnapshotState = 'active' | 'released' | 'expired';

export interface SnapshotRecord {
  readonly id: string;
  readonly processorId: string;
  readonly instance: string;
  readonly collection: string;
  readonly state: SnapshotState;
  /** Milliseconds since the Unix epoch. */
  readonly createdAt: number;
  readonly expiresAt: number;
  /** When a released or expired snapshot's tombstone is forgotten. */
  readonly forgetAt: number | null;
  readonly rowCount: number;
  readonly valueBytes: number;
  /** The resolved filter the rows were selected with. */
  readonly filter: { fromBlock: number | null; toBlock: number | null; fromTimestamp: number | null; toTimestamp: number | null; explicit: boolean };
  /** Fields every page repeats unchanged, as JSON: coverage, change boundary, boundaryCursor, recovery, retainedBounds. */
  readonly pageFieldsJson: string;
}

export function snapshotIdBytes(id: string): Buffer {
  const bytes = Buffer.from(id, 'base64url');
  if (bytes.length !== SNAPSHOT_ID_BYTES || bytes.toString('base64url') !== id) throw new RangeError('not a snapshot id');
  return bytes;
}

export function isSnapshotId(id: string): boolean {
  try {
    snapshotIdBytes(id);
    return true;
  } catch {
    return false;
  }
}

export function snapshotRowKey(id: Buffer, ordinal: number): Buffer {
  const key = Buffer.allocUnsafe(ROW_KEY_BYTES);
  id.copy(key, 0);
  key.writeUInt32BE(ordinal, SNAPSHOT_ID_BYTES);
  return key;
}

export function readSnapshot(snapshots: StringKeyedRecordTable, id: string): SnapshotRecord | undefined {
  return snapshots.get(id) as SnapshotRecord | undefined;
}

/** Rows `ordinal` .. `ordinal + limit - 1`, as stored. */
export function readSnapshotRows(rows: BinaryTable, id: string, ordinal: number, limit: number): Buffer[] {
  const bytes = snapshotIdBytes(id);
  const result: Buffer[] = [];
  const end = snapshotRowKey(bytes, Math.min(ordinal + limit, 0xffff_ffff));
  for (const { value } of rows.getRange({ start: snapshotRowKey(bytes, ordinal), end })) result.push(value);
  return result;
}

/** Removes up to `max` rows of a snapshot (call inside a write transaction); returns how many were removed. */
export function removeSnapshotRows(rows: BinaryTable, id: string, max: number): number {
  const bytes = snapshotIdBytes(id);
  let removed = 0;
  for (const key of rows.getKeys({ start: snapshotRowKey(bytes, 0), end: snapshotRowKey(bytes, 0xffff_ffff), limit: max })) {
    rows.remove(key);
    removed += 1;
  }
  return removed;
}

/** Every snapshot record (the sweep walks them; their number is bounded by `max_active` plus tombstones). */
export function listSnapshots(snapshots: StringKeyedRecordTable): SnapshotRecord[] {
  const records: SnapshotRecord[] = [];
  for (const { value } of snapshots.getRange({})) records.push(value as SnapshotRecord);
  return records;
}
