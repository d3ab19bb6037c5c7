/**
 * The `[devnet]` configuration: every knob of the deterministic local chain, its defaults, and the one place that
 * turns operator input (TOML values, test overrides) into a checked `DevnetConfig`.
 */
import type { BlobScheduleEntry } from '../eth/index.js';
import { checkDevnetConfig } from './config-checks.js';

/** Fork activations as seconds after `genesisTimestamp` (a block activates a fork when its timestamp reaches it). */
export interface DevnetForkOffsets {
  /** Cancun (blobs, EIP-4844); 0 = at genesis, later values give Shanghai blocks first. */
  cancun: number;
  /** Prague (EIP-7691 blob params, EIP-7702 set-code transactions, requests hash). */
  prague: number;
  /** Osaka (EIP-7918 blob reserve price). */
  osaka: number;
  /** BPO1 (blob parameter only fork with `bpo1Blob`). */
  bpo1: number;
}

export interface DevnetConfig {
  /** Seed of every random choice (keys, transactions, reorg branches); same seed, same chain. */
  seed: string | number | bigint;
  /** EIP-155 chain id signed into every transaction. */
  chainId: number;
  /** Timestamp of the genesis block, in seconds. */
  genesisTimestamp: number;
  /** Pace of the actor's timer; block timestamps advance by ceil(blockTimeMs / 1000) s per block. */
  blockTimeMs: number;
  /** Gas limit of every block (constant). */
  gasLimit: bigint;
  /** Non-blob transactions per block, a tenth of them gas-steering batches (block 1 adds the token and pool setup). */
  transactionsPerBlock: number;
  /** Average blob transactions per block (drawn from 0..2×average, capped by the fork's blob max and price). */
  blobTransactionsPerBlock: number;
  /** Upper bound of blobs in one blob transaction (1..6, EIP-7594). */
  maxBlobsPerTransaction: number;
  /** Number of transaction-sending accounts derived from the seed. */
  accounts: number;
  /** Blocks between reorgs (a reorg happens when the head number is a multiple); 0 disables reorgs. */
  reorgEvery: number;
  /** Blocks abandoned by each reorg (the replacement branch is one block longer). */
  reorgDepth: number;
  /** Finalized block trails the head by this many blocks; must exceed reorgDepth. */
  finalityLag: number;
  /** Blocks kept in memory below the head (besides genesis); must exceed finalityLag. */
  retainBlocks: number;
  /** Fork activation offsets, in seconds after genesis. */
  forks: DevnetForkOffsets;
  /** Blob parameters of BPO1. */
  bpo1Blob: BlobScheduleEntry;
}

/** Overrides of some fields; nested sections may be partial too. Quantities may come as numbers (TOML). */
export type DevnetConfigInput = Partial<Omit<DevnetConfig, 'gasLimit' | 'forks' | 'bpo1Blob'>> & {
  gasLimit?: bigint | number;
  forks?: Partial<DevnetForkOffsets>;
  bpo1Blob?: Partial<Omit<BlobScheduleEntry, 'baseFeeUpdateFraction'>> & { baseFeeUpdateFraction?: bigint | number };
};

export const DEFAULT_DEVNET_CONFIG: Readonly<DevnetConfig> = Object.freeze({
  seed: 'chain-data-node',
  chainId: 1337,
  genesisTimestamp: 1_700_000_000,
  blockTimeMs: 2000,
  gasLimit: 30_000_000n,
  transactionsPerBlock: 12,
  blobTransactionsPerBlock: 3,
  maxBlobsPerTransaction: 6,
  accounts: 16,
  reorgEvery: 30,
  reorgDepth: 2,
  finalityLag: 8,
  retainBlocks: 1024,
  // With 2 s blocks: Cancun at genesis, Prague at block 20, Osaka at 40, BPO1 at 60.
  forks: Object.freeze({ cancun: 0, prague: 40, osaka: 80, bpo1: 120 }),
  bpo1Blob: Object.freeze({ target: 10, max: 15, baseFeeUpdateFraction: 8_346_193n }),
});

/** The keys whose value is not `undefined` (an unset optional key keeps its default). */
function setKeys<T extends object>(input: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(input ?? {}).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** Defaults overlaid with `input`, checked; throws `DevnetConfigError` naming the first bad key. */
export function resolveDevnetConfig(input: DevnetConfigInput = {}): DevnetConfig {
  const merged = {
    ...DEFAULT_DEVNET_CONFIG,
    ...setKeys(input),
    forks: { ...DEFAULT_DEVNET_CONFIG.forks, ...setKeys(input.forks) },
    bpo1Blob: { ...DEFAULT_DEVNET_CONFIG.bpo1Blob, ...setKeys(input.bpo1Blob) },
  };
  return checkDevnetConfig(merged);
}

/** Seconds between consecutive block timestamps. */
export function secondsPerBlock(config: DevnetConfig): number {
  return Math.ceil(config.blockTimeMs / 1000);
}

/** The timestamp of block `number` (the same on every branch). */
export function blockTimestamp(config: DevnetConfig, number: number): number {
  return config.genesisTimestamp + number * secondsPerBlock(config);
}
