/** What the devnet hands out: blocks with their receipts, and the steps (new block or reorg) of its chain. */
import type { Block, Hash, Receipt, Withdrawal } from '../eth/index.js';
import type { BlockRef } from '../../store/chain-types.js';

export interface DevnetBlock {
  /** Header and body; `withdrawals` always present (Shanghai from genesis), `uncles` always empty. */
  block: Block & { withdrawals: Withdrawal[] };
  /** One receipt per transaction, in order. */
  receipts: Receipt[];
  /** keccak256 of the header's RLP. */
  hash: Hash;
}

/** A reorg: `depth` blocks above `forkPoint` are abandoned; `blocks` (depth + 1 of them) replace them and win. */
export interface DevnetReorg {
  kind: 'reorg';
  depth: number;
  forkPoint: BlockRef;
  /** The abandoned blocks, lowest first (still readable by hash while retained). */
  abandoned: BlockRef[];
  /** The new branch, lowest first: its first block's parent is `forkPoint`. */
  blocks: DevnetBlock[];
}

export type DevnetStep = ({ kind: 'block' } & DevnetBlock) | DevnetReorg;
