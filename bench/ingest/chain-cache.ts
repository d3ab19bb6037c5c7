/**
 * The pre-generated devnet chain of the ingest bench, cached on disk under `bench/cache/` (relative to the working
 * directory, like `bench/results/`) and keyed by the resolved generator config and the block count, so a chain is
 * generated once per config (signing and building are slow: a few blocks per second at 200 transactions).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { encodeBlock, encodeEth69Receipts } from '../../net/eth/index.js';
import { devnetSteps, resolveDevnetConfig, type DevnetConfig, type DevnetConfigInput } from '../../net/devnet/index.js';
import { createChainFileWriter } from './chain-file.js';
import { writeCycledChain } from './chain-cycle.js';

export interface IngestChain {
  devnet: DevnetConfigInput;
  blocks: number;
  /**
   * Generate only this many blocks and repeat their bodies under new headers up to `blocks` (./chain-cycle.ts): for
   * chains longer than generating allows.
   */
  cycle?: number;
}

export interface CachedChain {
  path: string;
  config: DevnetConfig;
  blocks: number;
}

/** Bump when the generator's output for the same config changes. */
const CACHE_GENERATION = 2;

export const CACHE_DIR = resolve('bench', 'cache');

function cacheKey(config: DevnetConfig, blocks: number, cycle?: number): string {
  const canonical = JSON.stringify({ generation: CACHE_GENERATION, config, blocks, ...(cycle === undefined ? {} : { cycle }) }, (_, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

async function generate(config: DevnetConfig, blocks: number, path: string, progress: (done: number) => void): Promise<void> {
  const writer = createChainFileWriter(path, `${path}.${process.pid}.tmp`);
  try {
    let done = 0;
    for await (const step of devnetSteps(config, blocks)) {
      if (step.kind !== 'block') throw new Error('the ingest chain must be generated with reorgs off (reorgEvery = 0)');
      writer.append({ block: encodeBlock(step.block), receipts: encodeEth69Receipts(step.receipts) });
      progress((done += 1));
    }
    writer.finish();
  } catch (error) {
    writer.abandon();
    throw error;
  }
}

/** The chain file for `chain`, generated first when the cache does not hold it. */
export async function cachedChain(chain: IngestChain, progress: (done: number) => void = () => undefined): Promise<CachedChain> {
  const config = resolveDevnetConfig(chain.devnet);
  mkdirSync(CACHE_DIR, { recursive: true });
  const cycle = chain.cycle !== undefined && chain.cycle < chain.blocks ? chain.cycle : undefined;
  const path = join(CACHE_DIR, `ingest-${chain.blocks}x${config.transactionsPerBlock}${cycle === undefined ? '' : `-cycle${cycle}`}-${cacheKey(config, chain.blocks, cycle)}.chain`);
  if (!existsSync(path)) {
    if (cycle === undefined) await generate(config, chain.blocks, path, progress);
    else await writeCycledChain(await cachedChain({ devnet: chain.devnet, blocks: cycle }, progress), chain.blocks, path, progress);
  }
  return { path, config, blocks: chain.blocks };
}
