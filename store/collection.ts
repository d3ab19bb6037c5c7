/**
 * A collection: a named, block-ordered view over rows of a processor instance's entity table, as the
 * generic entity API (spec §2.7, §4.3) reads it. Kinds declare their collections; the API scans them
 * without knowing any kind.
 */
import type { BinaryTable } from './store.js';
import type { Finality, Hex } from './chain-types.js';

/** Block metadata of one stored row, carried by every generic entity result (spec §2.7). */
export interface CollectionRowMeta {
  readonly blockNumber: number | null;
  readonly blockHash: Hex | null;
  readonly timestamp: number | null;
  readonly finality: Finality | null;
}

/** One row of a collection as a scan yields it. */
export interface CollectionRow {
  /** The entity key (what `/entities/{key}` names, in hex). */
  readonly key: Buffer;
  readonly value: Buffer;
  /** Where the row sits in the collection's scan order; a scan resumes strictly after it. */
  readonly position: Buffer;
  readonly meta: CollectionRowMeta;
}

export interface CollectionScan {
  /** Inclusive block bounds; rows without a block are left out when either is given. */
  readonly fromBlock: number | null;
  readonly toBlock: number | null;
  /** Resume strictly after this position (null: from the start). */
  readonly after: Buffer | null;
  /** The instance's finalized block (null: none), read before the rows: a kind may derive a row's finality from it. */
  readonly finalizedNumber: number | null;
}

/**
 * A collection of a kind's entity table, served by the generic entity API (spec §2.7, §4.3). Rows are
 * scanned in block order (a block range is one cursor walk where the key layout allows it).
 */
export interface CollectionDescription {
  readonly name: string;
  readonly description: string;
  /** The schema label of its rows' decoded data. */
  readonly schema: string;
  /** True when `key` names a row of this collection (the entity route refuses other keys). */
  owns(key: Uint8Array): boolean;
  /** The row stored under an entity key, with its metadata (`finalizedNumber` as in CollectionScan); undefined when absent. */
  get(entities: BinaryTable, key: Buffer, finalizedNumber: number | null): CollectionRow | undefined;
  scan(entities: BinaryTable, scan: CollectionScan): Iterable<CollectionRow>;
  /** Lowest and highest block among the rows present (spec §2.7 retainedBounds), null when none has a block. */
  bounds(entities: BinaryTable): { readonly fromBlock: number; readonly toBlock: number } | null;
}
