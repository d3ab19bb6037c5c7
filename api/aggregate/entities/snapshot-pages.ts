/**
 * Pages of a materialized snapshot, read in the listener from `snapshot.rows`. Every page of one
 * snapshot repeats the fields captured at creation (coverage, change boundary, boundaryCursor,
 * recovery, rowCount, valueBytes, retainedBounds), so a page fetched again — while blocks commit, or
 * after a node restart — is byte-identical until the snapshot expires or is released. After that a
 * page answers 410 `cursor_expired` saying to start again.
 */
import { HttpError } from '../../errors.js';
import type { Store } from '../../../store/store.js';
import { readSnapshot, readSnapshotRows, type SnapshotRecord } from '../../../store/snapshots.js';
import type { CollectionTarget } from './collection-target.js';
import { decodeSnapshotPage, encodeSnapshotPage, snapshotScope } from './entity-page-token.js';
import { pageWithFields } from './page-body.js';

export function snapshotPageBytes(store: Store, record: SnapshotRecord, ordinal: number, limit: number, now: number): Buffer {
  requireLive(record, now);
  const rows = readSnapshotRows(store.snapshotRows, record.id, ordinal, limit);
  const next = ordinal + rows.length;
  const nextCursor = next < record.rowCount ? encodeSnapshotPage(snapshotScope(store.epoch, record.instance, record.collection), { snapshotId: record.id, ordinal: next }) : null;
  return pageWithFields(rows, { nextCursor, ...(JSON.parse(record.pageFieldsJson) as Record<string, unknown>) });
}

/** The page a `nextCursor` names, for the entities route and the query-and-follow route. */
export function snapshotPageByToken(store: Store, target: CollectionTarget, token: string, limit: number, now: number): Buffer {
  const { snapshotId, ordinal } = decodeSnapshotPage(token, snapshotScope(store.epoch, target.processor.instance, target.collection.name));
  const record = readSnapshot(store.snapshots, snapshotId);
  if (!record) throw gone(snapshotId, 'no longer exists');
  if (ordinal > record.rowCount) throw new HttpError('cursor_invalid', 'the page cursor is malformed');
  return snapshotPageBytes(store, record, ordinal, limit, now);
}

function requireLive(record: SnapshotRecord, now: number): void {
  if (record.state === 'released') throw gone(record.id, 'was released');
  if (record.state === 'expired' || record.expiresAt <= now) throw gone(record.id, `expired at ${new Date(record.expiresAt).toISOString()}`, record.expiresAt);
}

function gone(id: string, what: string, expiresAt?: number): HttpError {
  return new HttpError('cursor_expired', `snapshot ${id} ${what}; call query-and-follow again for a new snapshot`, {
    snapshot: id, ...(expiresAt !== undefined ? { expiredAt: new Date(expiresAt).toISOString() } : {}), action: 'query-and-follow again',
  });
}
