/**
 * The `source` lane's inbox, and the replies to its asks. The lane runs one of devnet.ts, rpc.ts, none.ts or the p2p
 * peer manager (actors/peers/actor.ts); each accepts `finalized`, only the p2p one `network-status`.
 *
 *   finality → source   ask `finalized` → the block its finality backend calls finalized, or null (not yet)
 *   listener → source   ask `network-status` → P2pSnapshot (kind p2p, for /v1/network/status)
 *   history  → source   ask `history.blocks` / `history.headers` / `history.range` (kind p2p: the `p2p` history source)
 */
import type { P2pSnapshot } from '../../net/p2p/network-snapshot.js';
import type { BlockRef } from '../../store/chain-types.js';
import type { Hash } from '../../net/eth/hex.js';

export type FinalizedAsk = { readonly type: 'finalized' };
export type NetworkStatusAsk = { readonly type: 'network-status' };
/** History from the peers (the `p2p` history source): blocks `from..to`, verified, with receipts when asked. */
export type HistoryBlocksAsk = {
  readonly type: 'history.blocks'; readonly from: number; readonly to: number; readonly receipts: boolean;
  /** The proven hash of block `to`: headers are then asked down from it by hash, so a peer on another branch is left out. */
  readonly topHash?: Hash;
};
/** Headers `from..to` (the anchoring walk below the recorded chain). */
export type HistoryHeadersAsk = { readonly type: 'history.headers'; readonly from: number; readonly to: number; readonly topHash?: Hash };
/** What the connected peers announce they serve (the source probe). */
export type HistoryRangeAsk = { readonly type: 'history.range' };

/** What every live source accepts. */
export type SourceInbox = FinalizedAsk;

/** What the p2p source accepts. */
export type P2pSourceInbox = FinalizedAsk | NetworkStatusAsk | HistoryBlocksAsk | HistoryHeadersAsk | HistoryRangeAsk;

/** One block of a `history.blocks` answer: its material as the chain tables store it (receipts null when not asked). */
export interface PeerHistoryBlock {
  readonly number: number;
  readonly hash: Hash;
  readonly header: Uint8Array;
  readonly body: Uint8Array;
  readonly receipts: Uint8Array | null;
}

/** What the connected qualified peers announce (eth/69 ranges; an eth/68 peer announces none). */
export interface PeerHistoryRange {
  readonly peers: number;
  /** Peers that announced a range (eth/69). */
  readonly announcing: number;
  /** The union of the announced ranges' bounds (null when no peer announced one). */
  readonly earliest: number | null;
  readonly latest: number | null;
  /** Peers whose announced range holds `latest`, or that announce none (eth/68: asked, they may answer). */
  readonly holding: number;
}

export interface SourceReplies {
  readonly finalized: BlockRef | null;
  readonly 'network-status': P2pSnapshot;
  readonly 'history.blocks': readonly PeerHistoryBlock[];
  readonly 'history.headers': ReadonlyArray<{ readonly number: number; readonly hash: Hash; readonly parentHash: Hash }>;
  readonly 'history.range': PeerHistoryRange;
}
