/**
 * How one processor kind's public change feed lands in tables (issue 32): its collections — each a table with the
 * common columns (key, data, block_number, block_hash, finality, change_sequence) plus typed columns PostgreSQL
 * computes from the data — and, per `apply` or `undo` envelope, the row writes it means. A mapping reads only the
 * published change schema (spec §2.3, the kind's `/schema` document); it never imports the kind.
 */
import type { ChangeEnvelope } from '../../../api/client/index.js';

/** A typed column: a STORED generated column over the row's `data` (so it can never disagree with it). */
export interface TypedColumn {
  readonly name: string;
  readonly type: string;
  /** SQL over `data` (jsonb), immutable. */
  readonly expression: string;
}

export interface TableIndex {
  /** Suffix of the index name (`<table>_<suffix>`). */
  readonly suffix: string;
  /** The indexed expression list, e.g. `holder` or `token, balance DESC`. */
  readonly on: string;
}

export interface CollectionMapping {
  /** The collection's name at the node (`/v1/processors/{p}/collections`). */
  readonly collection: string;
  readonly columns: readonly TypedColumn[];
  readonly indexes: readonly TableIndex[];
  /** The data carries the row's finality as its `finality` field (kept equal to the column when finality advances). */
  readonly dataFinality: boolean;
}

/** One row write a change means: an upsert (`data` set) or a delete (`data` null). */
export interface RowWrite {
  readonly collection: string;
  readonly key: string;
  readonly data: Record<string, unknown> | null;
  readonly blockNumber: number | null;
  readonly blockHash: string | null;
  readonly finality: string | null;
}

export interface KindMapping {
  /** The processor kind (`/v1/processors/{p}/status` → processor.kind). */
  readonly kind: string;
  /** The change schema label it reads (processor.changeSchema); another one is refused. */
  readonly changeSchema: string;
  readonly collections: readonly CollectionMapping[];
  /** The row writes of one `apply` or `undo` envelope, in order; throws UnknownChangeError for a change kind it does not know. */
  writes(change: ChangeEnvelope): RowWrite[];
}

export class UnknownChangeError extends Error {
  constructor(change: ChangeEnvelope, mapping: string) {
    super(`change ${change.sequence} has kind '${change.kind}' (operation ${change.operation}), which the ${mapping} mapping does not know`);
    this.name = 'UnknownChangeError';
  }
}

/** `(data->>'field')::type`, for a typed column. */
export function field(name: string, type: string): string {
  return `(data->>'${name}')::${type}`;
}

interface LastChange { readonly blockNumber: number; readonly blockHash: string }

/**
 * A kind whose collection holds one row per key, written whole by `<prefix>.put` (apply, or an undo restoring it)
 * and removed by `<prefix>.delete`; the row's block is its `lastChange` and its finality its `finality` field
 * (erc20 balances, amm pools).
 */
export function rowPerKeyMapping(options: { kind: string; changeSchema: string; prefix: string; collection: Omit<CollectionMapping, 'dataFinality'> }): KindMapping {
  const put = `${options.prefix}.put`;
  const remove = `${options.prefix}.delete`;
  const name = options.collection.collection;
  return {
    kind: options.kind,
    changeSchema: options.changeSchema,
    collections: [{ ...options.collection, dataFinality: true }],
    writes(change) {
      if (change.key === null) throw new UnknownChangeError(change, options.kind);
      if (change.kind === remove) return [{ collection: name, key: change.key, data: null, blockNumber: null, blockHash: null, finality: null }];
      if (change.kind !== put) throw new UnknownChangeError(change, options.kind);
      const data = change.data as { lastChange?: LastChange | null; finality?: string };
      return [{ collection: name, key: change.key, data: data as Record<string, unknown>, blockNumber: data.lastChange?.blockNumber ?? null, blockHash: data.lastChange?.blockHash ?? null, finality: data.finality ?? change.finality }];
    },
  };
}
