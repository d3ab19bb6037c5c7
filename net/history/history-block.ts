/**
 * What a history source hands the history lane: one block's verified material (as the chain tables store it) with
 * its number, hash and parent hash, so a chunk can be checked as a hash chain. Every failure of a source to serve a
 * block it should is a `HistoryBlockError` naming the block and the reason.
 */
import type { BlockMaterial } from '../../store/chain-material.js';
import type { Hash } from '../eth/hex.js';

export interface HistoryBlock {
  readonly number: number;
  readonly hash: Hash;
  readonly parentHash: Hash;
  readonly material: BlockMaterial;
}

/** A header's place in the hash chain: its number, its hash (computed from its fields) and its parent hash. */
export interface HeaderLink {
  readonly number: number;
  readonly hash: Hash;
  readonly parentHash: Hash;
}

/** A block a source could not serve verified: which block, and why (the verification field, or the upstream failure). */
export class HistoryBlockError extends Error {
  override readonly name: string = 'HistoryBlockError';
  constructor(readonly blockNumber: number, readonly reason: string) {
    super(`block ${blockNumber}: ${reason}`);
  }
}

/**
 * Checks that `blocks` (ascending, consecutive numbers from `from`) form one hash chain, and that it links to the
 * known neighbours: `below` the hash of block from−1 and `above` the parent hash block to+1 names (each when known).
 */
export function checkHashChain(blocks: readonly HistoryBlock[], from: number, below: Hash | null, above: Hash | null): void {
  blocks.forEach((block, index) => {
    if (block.number !== from + index) throw new HistoryBlockError(from + index, `the source answered with block ${block.number}`);
    const parent = index === 0 ? below : blocks[index - 1]!.hash;
    if (parent !== null && block.parentHash !== parent) {
      throw new HistoryBlockError(block.number, `parentHash ${block.parentHash} does not link to block ${block.number - 1} (${parent})`);
    }
  });
  const last = blocks.at(-1);
  if (last && above !== null && above !== last.hash) {
    throw new HistoryBlockError(last.number, `hash ${last.hash} is not the parent of block ${last.number + 1} (which names ${above})`);
  }
}
