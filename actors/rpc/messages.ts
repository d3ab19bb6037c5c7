/**
 * The `rpc` lane's inbox (actors/rpc/actor.ts): notices only, it answers no ask.
 *
 *   chain   → rpc   JournalNotice  (actors/chain/messages.ts) subscriptions publish the journal up to `sequence`
 *   history → rpc   FilledMessage  the end of an on-demand history request (actors/history/on-demand.ts)
 */
import type { JournalNotice } from '../chain/messages.js';

export interface FillError {
  readonly code: 'source_unavailable' | 'query_too_expensive' | 'unsupported_capability' | 'range_incomplete';
  readonly message: string;
  readonly blockNumber?: number;
}

export type FilledMessage = {
  readonly type: 'history.filled';
  readonly id: number;
  readonly error: FillError | null;
};

export type RpcInbox = JournalNotice | FilledMessage;
