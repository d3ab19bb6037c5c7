/**
 * The change boundary of a read (spec §2.7, §4.4 rules 5–7): the last change sequence committed in
 * the state the read saw, its cursor, and how to follow from it. Must be called in the same LMDB read
 * snapshot (the same synchronous turn, or the same transaction) as the rows it describes.
 */
import { readChanges } from '../../../store/change-log.js';
import { readProgress } from '../../../store/coverage.js';
import { encodeCursor } from '../../../store/cursor.js';
import type { ProcessorTables } from '../../../store/store.js';
import type { ConfiguredProcessor } from '../configured-processors.js';

export interface ChangeBoundary {
  /** Decimal string: the highest change sequence included in the read. */
  readonly sequence: string;
}

export interface Recovery {
  /** What the application does next. */
  readonly action: string;
  /** Where to follow from the boundary; null when delivery is disabled. */
  readonly follow: { readonly changes: string; readonly stream: string } | null;
}

export interface ReadBoundary {
  readonly changeBoundary: ChangeBoundary;
  readonly boundaryCursor: string | null;
  readonly recovery: Recovery;
}

export interface BoundaryOwner {
  readonly epoch: bigint;
  readonly chainId: number;
}

export function readBoundary(owner: BoundaryOwner, processor: ConfiguredProcessor, tables: ProcessorTables | null): ReadBoundary {
  const sequence = tables ? readProgress(tables.state).changeSequence : 0n;
  const changeBoundary = { sequence: sequence.toString() };
  if (!processor.delivery) {
    return { changeBoundary, boundaryCursor: null, recovery: { action: 'requery: delivery is disabled for this processor, so there is no change feed to follow', follow: null } };
  }
  const stored = tables && sequence > 0n ? readChanges({ changes: tables.changes, epoch: owner.epoch, chainId: owner.chainId, instance: processor.instance }, sequence - 1n, 1)[0] : undefined;
  // A pruned boundary change still has a resumable position: a cursor without block naming the sequence.
  const boundaryCursor = stored?.sequence === sequence
    ? stored.cursor
    : encodeCursor({ epoch: owner.epoch, chainId: owner.chainId, instance: processor.instance, sequence });
  const base = `/v1/processors/${encodeURIComponent(processor.id)}`;
  const after = encodeURIComponent(boundaryCursor);
  return {
    changeBoundary,
    boundaryCursor,
    recovery: {
      action: 'import every page by nextCursor, then follow changes after boundaryCursor',
      follow: { changes: `${base}/changes?after=${after}`, stream: `${base}/stream?after=${after}` },
    },
  };
}

/** A stable id of the state a live read saw: the instance's change sequence names it. */
export function liveSnapshotId(boundary: ChangeBoundary): string {
  return `live-${boundary.sequence}`;
}
