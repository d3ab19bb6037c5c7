/**
 * The `chain` lane's inbox (actors/chain/actor.ts), and the notice it sends its followers.
 *
 *   source    → chain      HeadNotice       after the block's material (and every block of its branch back to a
 *                                           known ancestor) is verified and recorded with store/chain-material.ts
 *   finality  → chain      FinalizedNotice  the finalized block by the lane's finality backend
 *   any       → chain      ask ChainStatusAsk → ChainReplies['status']
 *   chain     → processor, rpc  JournalNotice  the chain journal grew to `sequence` (inclusive); in their inboxes
 *
 * Hashes travel as 0x-hex strings; bulk data never travels: readers read LMDB.
 */
import type { Hex } from '../../net/eth/hex.js';
import type { BlockRef } from '../../store/chain-types.js';

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

export type ChainStatusAsk = { readonly type: 'status' };

export type ChainInbox = HeadNotice | FinalizedNotice | ChainStatusAsk;

export interface ChainReplies {
  readonly status: {
    readonly head: BlockRef | null;
    readonly finalized: BlockRef | null;
    /** The finality backend's finalized block, when the chain has not recorded it yet (a p2p source starting there). */
    readonly pendingFinalized: BlockRef | null;
    readonly journalSequence: number;
    readonly failed: string | null;
  };
}

export type JournalNotice = {
  readonly type: 'journal';
  readonly sequence: number;
};
