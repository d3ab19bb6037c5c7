/** The chains the ingest bench runs over: mainnet-shaped for a full run, tiny for `--smoke`. */
import type { IngestChain } from './chain-cache.js';

/** Reorgs off (each step is the next canonical block); finality and retention as small as the devnet allows. */
const LINEAR = { reorgEvery: 0, reorgDepth: 1, finalityLag: 2, retainBlocks: 4 } as const;

/** About 200 transactions per block (ERC-20, AMM swaps, set-code, batches) with a few blob transactions each. */
export const MAINNET_SHAPED_CHAIN: IngestChain = {
  devnet: { seed: 'ingest-bench', transactionsPerBlock: 200, blobTransactionsPerBlock: 6, maxBlobsPerTransaction: 3, accounts: 256, ...LINEAR },
  blocks: 1024,
};

export const SMOKE_CHAIN: IngestChain = {
  devnet: { seed: 'ingest-bench-smoke', transactionsPerBlock: 20, blobTransactionsPerBlock: 3, maxBlobsPerTransaction: 3, accounts: 32, ...LINEAR },
  blocks: 20,
};
