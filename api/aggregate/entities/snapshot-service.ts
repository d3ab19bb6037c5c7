/**
 * How a listener reaches the `snapshots` lane, the one writer of query-and-follow snapshots: it asks
 * for a snapshot to be materialized or released and gets a small summary back; the rows themselves
 * never cross a mailbox (the listener reads them from LMDB).
 */
import type { FilterParams } from './entity-query.js';

export interface CreateSnapshotRequest {
  readonly processor: string;
  readonly collection: string;
  readonly params: FilterParams;
}

export interface SnapshotSummary {
  readonly id: string;
  readonly rowCount: number;
  readonly valueBytes: number;
  readonly expiresAt: number;
}

export interface SnapshotService {
  /** Materializes a snapshot; rejects with the spec error (range_incomplete, output_not_retained, query_too_expensive…). */
  create(request: CreateSnapshotRequest): Promise<SnapshotSummary>;
  /** Releases a snapshot early; rejects with `not_found` for an unknown one. */
  release(processor: string, snapshot: string): Promise<void>;
}

