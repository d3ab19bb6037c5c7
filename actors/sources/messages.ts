/**
 * The `source` lane's inbox, and the replies to its asks. The lane runs one of devnet.ts, rpc.ts, none.ts or the p2p
 * peer manager (actors/peers/actor.ts); each accepts `finalized`, only the p2p one `network-status`.
 *
 *   finality → source   ask `finalized` → the block its finality backend calls finalized, or null (not yet)
 *   listener → source   ask `network-status` → P2pSnapshot (kind p2p, for /v1/network/status)
 */
import type { Hex } from '../../net/eth/hex.js';
import type { P2pSnapshot } from '../../net/p2p/network-snapshot.js';

export type FinalizedAsk = { readonly type: 'finalized' };
export type NetworkStatusAsk = { readonly type: 'network-status' };

/** What every live source accepts. */
export type SourceInbox = FinalizedAsk;

/** What the p2p source accepts. */
export type P2pSourceInbox = FinalizedAsk | NetworkStatusAsk;

export interface SourceReplies {
  readonly finalized: { readonly number: number; readonly hash: Hex } | null;
  readonly 'network-status': P2pSnapshot;
}
