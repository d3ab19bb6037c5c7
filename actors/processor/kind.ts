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
import type { ProcessorTables } from '../../store/env.js';
import type { Finality } from '../../store/coverage.js';

export interface KindContext {
  readonly tables: ProcessorTables;
  readonly network: string;
  readonly schedule: ForkSchedule;
  readonly genesis: { readonly hash: Hex; readonly timestamp: number };
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

export interface ProcessorKind {
  readonly descriptor: ProcessorDescriptor;
  /** The change kind of `finalized` envelopes. */
  readonly finalizedKind: string;
  /** Writes the rows of an applied block (inside the lane's write transaction) and returns its changes. */
  apply(ctx: KindContext, block: BlockInput, finality: Finality): KindChange[];
  /** Removes the rows of an undone block and returns the undo change carrying their previous value; null when nothing was stored. */
  undo(ctx: KindContext, number: number, hash: Hex): KindChange | null;
  /** Marks the rows of blocks `from`..`to` (inclusive) finalized. */
  finalize(ctx: KindContext, from: number, to: number): void;
}
