/**
 * Messages between the chain-data lanes (each receiving actor lists the ones it accepts).
 *
 *   source    → chain      HeadNotice       after the block's material (and every block of its branch back to a
 *                                           known ancestor) is verified and recorded with store/chain-material.ts
 *   finality  → chain      FinalizedNotice  the finalized block by the lane's finality backend
 *   chain     → processor  JournalNotice    the chain journal grew to `sequence` (inclusive)
 *   processor → listener   ChangesNotice    a processor's change log grew to `sequence` (inclusive)
 *   node      → listener   LaneTroublesNotice  which processors are degraded or failed by lane trouble, on every change
 *
 * Hashes travel as 0x-hex strings; bulk data never travels: readers read LMDB.
 * (Type aliases, not interfaces, so they are assignable to the runtime's Message type.)
 */
import type { Hex } from '../../net/eth/hex.js';

export type HeadNotice = {
  readonly type: 'head';
  readonly number: number;
  readonly hash: Hex;
};

export type FinalizedNotice = {
  readonly type: 'finalized';
  readonly number: number;
  readonly hash: Hex;
};

export type JournalNotice = {
  readonly type: 'journal';
  readonly sequence: number;
};

export type ChangesNotice = {
  readonly type: 'changes';
  readonly processor: string;
  readonly sequence: number;
  /** When the commit that made `sequence` durable completed: ms since the epoch (sub-ms precision). */
  readonly committedAt: number;
};

export type LaneTroublesNotice = {
  readonly type: 'lanes';
  readonly troubles: Readonly<Record<string, { readonly state: 'degraded' | 'failed'; readonly reason: string }>>;
};
