/**
 * The mainnet-shaped chain the backfill workload's `replay` upstream and its p2p history peers serve: the ingest
 * bench's chain (bench/ingest/chains.ts) with every fork at genesis (a follower over JSON-RPC takes the schedule from
 * `eth_config` alone only when nothing activated after genesis), `length` blocks long (default: the shape's own).
 * Past `GENERATED_MAX` blocks the chain repeats the first `GENERATED_MAX` blocks' bodies under new headers
 * (bench/ingest/chain-cycle.ts): generating runs at a few blocks a second, ~10 hours for 100,000.
 */
import type { IngestChain } from '../ingest/chain-cache.js';
import { MAINNET_SHAPED_CHAIN, SMOKE_CHAIN } from '../ingest/chains.js';

/** The longest chain generated block by block (the 10,000-block cache entry); longer ones cycle it. */
export const GENERATED_MAX = 10_000;

export function historyChain(name: string, length?: number): IngestChain {
  const named = name === 'smoke' ? SMOKE_CHAIN : name === 'mainnet' ? MAINNET_SHAPED_CHAIN : undefined;
  if (named === undefined) throw new Error(`--chain ${name}: expected mainnet or smoke`);
  const blocks = length ?? named.blocks;
  if (!Number.isSafeInteger(blocks) || blocks < named.blocks) throw new Error(`--length ${length}: expected an integer of at least ${named.blocks}`);
  return { blocks, devnet: { ...named.devnet, forks: { cancun: 0, prague: 0, osaka: 0, bpo1: 0 } }, ...(blocks > GENERATED_MAX ? { cycle: GENERATED_MAX } : {}) };
}
