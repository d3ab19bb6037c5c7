/**
 * What a processor kind provides to the processor lane. The lane owns the journal position,
 * change sequences, cursors, envelopes, coverage and the transaction; a kind only turns one block
 * into entity rows and change payloads (deterministically: no clocks, no randomness).
 */
import type { BlockHeader } from '../../net/eth/header.js';
import type { Transaction } from '../../net/eth/transaction-types.js';
import type { Receipt } from '../../net/eth/receipt.js';
import type { Hex } from '../../net/eth/hex.js';
import type { ForkSchedule } from '../../net/eth/fork-schedule.js';
import type { BinaryTable, ProcessorTables } from '../../store/env.js';
import type { Finality } from '../../store/coverage.js';

export interface KindContext {
  readonly tables: ProcessorTables;
  readonly network: string;
  readonly schedule: ForkSchedule;
  readonly genesis: { readonly hash: Hex; readonly timestamp: number };
  readonly scheduleSource?: 'chain_spec' | 'eth_config';
}

export interface BlockInput {
  readonly number: number;
  readonly hash: Hex;
  readonly header: BlockHeader;
  readonly transactions: readonly Transaction[];
  readonly receipts: readonly Receipt[] | null;
  /** The block's RLP size in bytes. */
  readonly sizeBytes: number;
  /** The parent's timestamp, when its header is recorded (fork activations are found by it). */
  readonly parentTimestamp: number | null;
}

/** One change a kind publishes: its kind label, entity key and the payload JSON, rendered once. */
export interface KindChange {
  readonly kind: string;
  readonly key: string | null;
  readonly dataJson: string;
}

export interface ProcessorDescriptor {
  readonly kind: string;
  readonly version: string;
  readonly changeSchema: string;
  readonly genericApi: string;
  readonly deliveryOrdering: string;
}

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
  /** The row stored under an entity key, with its metadata; undefined when absent. */
  get(entities: BinaryTable, key: Buffer): CollectionRow | undefined;
  scan(entities: BinaryTable, scan: CollectionScan): Iterable<CollectionRow>;
  /** Lowest and highest block among the rows present (spec §2.7 retainedBounds), null when none has a block. */
  bounds(entities: BinaryTable): { readonly fromBlock: number; readonly toBlock: number } | null;
}

export interface ProcessorKind {
  readonly descriptor: ProcessorDescriptor;
  /** The collections its entity table serves through the generic entity API. */
  readonly collections: readonly CollectionDescription[];
  /** The change kind of `finalized` envelopes. */
  readonly finalizedKind: string;
  /** Writes the rows of an applied block (inside the lane's write transaction) and returns its changes. */
  apply(ctx: KindContext, block: BlockInput, finality: Finality): KindChange[];
  /** Removes the rows of an undone block and returns the undo change carrying their previous value; null when nothing was stored. */
  undo(ctx: KindContext, number: number, hash: Hex): KindChange | null;
  /** Marks the rows of blocks `from`..`to` (inclusive) finalized. */
  finalize(ctx: KindContext, from: number, to: number): void;
}
