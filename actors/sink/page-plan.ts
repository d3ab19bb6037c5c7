/**
 * One batch of changes folded into set-based table operations (pure; page-apply.ts runs them in one transaction):
 * per table the rows to upsert and the keys to delete — each key once, with the value the last change gave it — and
 * the highest block a `finalized` change made final. Changes at or below the sink's stored sequence are skipped
 * (a redelivery after a crash: spec §6 rule 5), and so are a collection's changes at or below the boundary of the
 * snapshot its table was bootstrapped from (they are in its rows already). A gap in the sequence is an error.
 */
import type { ChangeEnvelope } from '../../api/client/index.js';
import type { KindMapping, RowWrite } from './mappings/index.js';

export interface PendingRow {
  readonly key: string;
  /** The row's JSON (its finality field re-marked when a later change of the batch finalized its block). */
  readonly data: Record<string, unknown>;
  readonly blockNumber: number | null;
  readonly blockHash: string | null;
  readonly finality: string | null;
  /** The sequence of the change that wrote this value. */
  readonly sequence: string;
}

export interface TableOps {
  readonly upserts: Map<string, PendingRow>;
  readonly deletes: Set<string>;
  /**
   * The table's finalized block before the batch (-1: none): every row at or below it is final already, so the
   * UPDATE of a `finalized` change reads only the rows above it (the node's rule: a row whose block is at or below
   * the finalized block is finalized).
   */
  readonly finalizedFrom: number;
  /** Rows of blocks above finalizedFrom and at or below this one become finalized (before the upserts and deletes run); null: none. */
  finalizedThrough: number | null;
}

export interface PagePlan {
  /** By collection; only collections the batch touched. */
  readonly tables: Map<string, TableOps>;
  /** Per collection the sink lands, its finalized block after the batch (-1: none yet). */
  readonly finalized: ReadonlyMap<string, number>;
  /** The last change applied (its sequence and cursor), or null when every change was a replay. */
  readonly last: { readonly sequence: bigint; readonly cursor: string } | null;
  readonly applied: number;
  readonly skipped: number;
  /** Applied changes by operation. */
  readonly operations: Readonly<Record<'apply' | 'undo' | 'finalized', number>>;
  /** Each applied change's emittedAt (ISO time), for the commit-to-visible latency. */
  readonly emittedAt: readonly string[];
}

export interface PlanState {
  /** The sequence of the last change the tables hold. */
  readonly sequence: bigint;
  /** Per collection, the boundary sequence of the snapshot its table was bootstrapped from. */
  readonly boundaries: ReadonlyMap<string, bigint>;
  /** Per collection, the highest block its table holds finalized (-1 or missing: none). */
  readonly finalized?: ReadonlyMap<string, number>;
}

export class FeedGapError extends Error {
  constructor(readonly expected: bigint, readonly received: bigint) {
    super(`the change feed skipped from sequence ${expected - 1n} to ${received} (expected ${expected}); refusing to apply past a gap`);
    this.name = 'FeedGapError';
  }
}

function opsOf(tables: Map<string, TableOps>, collection: string, finalizedFrom: number): TableOps {
  let ops = tables.get(collection);
  if (!ops) {
    ops = { upserts: new Map(), deletes: new Set(), finalizedFrom, finalizedThrough: null };
    tables.set(collection, ops);
  }
  return ops;
}

/** The row as the node serves it when its block is at or below `finalized`: finalized (column, and data when it carries it). */
function served(row: PendingRow, finalized: number, dataFinality: boolean): PendingRow {
  if (row.blockNumber === null || row.blockNumber > finalized || row.finality === 'finalized') return row;
  return { ...row, finality: 'finalized', data: dataFinality ? { ...row.data, finality: 'finalized' } : row.data };
}

function write(ops: TableOps, row: RowWrite, sequence: string, finalized: number, dataFinality: boolean): void {
  if (row.data === null) {
    ops.upserts.delete(row.key);
    ops.deletes.add(row.key);
    return;
  }
  ops.deletes.delete(row.key);
  // An undo may restore a value whose block is final already: it is written finalized, as the node serves it.
  ops.upserts.set(row.key, served({ key: row.key, data: row.data, blockNumber: row.blockNumber, blockHash: row.blockHash, finality: row.finality, sequence }, finalized, dataFinality));
}

/** Marks the pending rows of blocks at or below `through` finalized (rows already in the table: the UPDATE). */
function finalize(ops: TableOps, through: number, dataFinality: boolean): void {
  ops.finalizedThrough = Math.max(ops.finalizedThrough ?? -1, through);
  for (const [key, row] of ops.upserts) {
    const final = served(row, through, dataFinality);
    if (final !== row) ops.upserts.set(key, final);
  }
}

/** Folds `changes` (one batch, in sequence order) for the `collections` the sink lands. */
export function planPage(changes: readonly ChangeEnvelope[], mapping: KindMapping, collections: ReadonlySet<string>, state: PlanState): PagePlan {
  const tables = new Map<string, TableOps>();
  const operations = { apply: 0, undo: 0, finalized: 0 };
  const emittedAt: string[] = [];
  const dataFinality = new Map(mapping.collections.map((c) => [c.collection, c.dataFinality]));
  const finalized = new Map([...collections].map((c) => [c, state.finalized?.get(c) ?? -1]));
  const from = new Map(finalized);
  let sequence = state.sequence;
  let cursor: string | null = null;
  let skipped = 0;
  for (const change of changes) {
    const current = BigInt(change.sequence);
    if (current <= sequence) {
      skipped += 1;
      continue;
    }
    if (current !== sequence + 1n) throw new FeedGapError(sequence + 1n, current);
    sequence = current;
    cursor = change.cursor;
    const fresh = (collection: string) => collections.has(collection) && current > (state.boundaries.get(collection) ?? -1n);
    switch (change.operation) {
      case 'apply':
      case 'undo':
        for (const row of mapping.writes(change)) {
          if (fresh(row.collection)) write(opsOf(tables, row.collection, from.get(row.collection)!), row, change.sequence, finalized.get(row.collection)!, dataFinality.get(row.collection) ?? false);
        }
        break;
      case 'finalized':
        if (change.block === null) throw new Error(`finalized change ${change.sequence} names no block`);
        for (const collection of collections) {
          if (!fresh(collection) || change.block.number <= finalized.get(collection)!) continue;
          finalize(opsOf(tables, collection, from.get(collection)!), change.block.number, dataFinality.get(collection) ?? false);
          finalized.set(collection, change.block.number);
        }
        break;
      default:
        throw new Error(`change ${change.sequence} has operation '${change.operation}', which a batch to apply cannot hold`);
    }
    operations[change.operation] += 1;
    if (typeof change.emittedAt === 'string') emittedAt.push(change.emittedAt);
  }
  return {
    tables,
    finalized,
    last: cursor === null ? null : { sequence, cursor },
    applied: operations.apply + operations.undo + operations.finalized,
    skipped,
    operations,
    emittedAt,
  };
}
