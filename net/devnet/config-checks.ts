/** Checks of a merged devnet config: types, ranges and the relations between keys (finality outside reorg reach). */
import type { DevnetConfig, DevnetForkOffsets } from './config.js';
import { DevnetConfigError } from './errors.js';
import { setupGas } from './setup-gas.js';

type Raw = Record<string, unknown>;

const TOP_KEYS = [
  'seed', 'chainId', 'genesisTimestamp', 'blockTimeMs', 'gasLimit', 'transactionsPerBlock', 'blobTransactionsPerBlock',
  'maxBlobsPerTransaction', 'accounts', 'reorgEvery', 'reorgDepth', 'finalityLag', 'retainBlocks', 'forks', 'bpo1Blob',
];
const FORK_KEYS = ['cancun', 'prague', 'osaka', 'bpo1'] as const;
const BLOB_KEYS = ['target', 'max', 'baseFeeUpdateFraction'];
/** EIP-7594 (Osaka) caps a transaction at six blobs; Cancun's block max is six too. */
const MAX_BLOBS_PER_TRANSACTION = 6;
const MAX_ACCOUNTS = 1024;
const MAX_TRANSACTIONS_PER_BLOCK = 10_000;

function rejectUnknownKeys(raw: Raw, known: readonly string[], prefix: string): void {
  for (const key of Object.keys(raw)) {
    if (!known.includes(key)) throw new DevnetConfigError(`${prefix}${key}`, raw[key], `one of the known keys (${known.join(', ')})`);
  }
}

function integer(raw: Raw, key: string, min: number, max = Number.MAX_SAFE_INTEGER, prefix = ''): number {
  const value = raw[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `between ${min} and ${max}`;
    throw new DevnetConfigError(`${prefix}${key}`, value, `an integer ${range}`);
  }
  return value;
}

function positiveQuantity(raw: Raw, key: string, min: bigint, prefix = ''): bigint {
  const value = raw[key];
  const asBigint = typeof value === 'bigint' ? value : typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : undefined;
  if (asBigint === undefined || asBigint < min) throw new DevnetConfigError(`${prefix}${key}`, value, `an integer >= ${min}`);
  return asBigint;
}

function seed(raw: Raw): string | number | bigint {
  const value = raw.seed;
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'bigint') return value;
  throw new DevnetConfigError('seed', value, 'a non-empty string or an integer');
}

function section(raw: Raw, key: string): Raw {
  const value = raw[key];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DevnetConfigError(key, value, 'a table');
  return value as Raw;
}

function forks(raw: Raw): DevnetForkOffsets {
  const table = section(raw, 'forks');
  rejectUnknownKeys(table, FORK_KEYS, 'forks.');
  const offsets = {} as DevnetForkOffsets;
  let previous = 0;
  let previousKey = '';
  for (const key of FORK_KEYS) {
    const offset = integer(table, key, 0, Number.MAX_SAFE_INTEGER, 'forks.');
    if (offset < previous) throw new DevnetConfigError(`forks.${key}`, offset, `seconds >= forks.${previousKey} (${previous}): forks activate in order`);
    offsets[key] = offset;
    previous = offset;
    previousKey = key;
  }
  return offsets;
}

function bpo1Blob(raw: Raw): DevnetConfig['bpo1Blob'] {
  const table = section(raw, 'bpo1Blob');
  rejectUnknownKeys(table, BLOB_KEYS, 'bpo1Blob.');
  const target = integer(table, 'target', 1, 1024, 'bpo1Blob.');
  const max = integer(table, 'max', target, 1024, 'bpo1Blob.');
  return { target, max, baseFeeUpdateFraction: positiveQuantity(table, 'baseFeeUpdateFraction', 1n, 'bpo1Blob.') };
}

function averageBlobTransactions(raw: Raw): number {
  const value = raw.blobTransactionsPerBlock;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 64) {
    throw new DevnetConfigError('blobTransactionsPerBlock', value, 'a number between 0 and 64 (an average)');
  }
  return value;
}

/** Checks every key of a merged config; the result is trusted by the generator. */
export function checkDevnetConfig(merged: object): DevnetConfig {
  const raw = merged as Raw;
  rejectUnknownKeys(raw, TOP_KEYS, '');
  const accounts = integer(raw, 'accounts', 2, MAX_ACCOUNTS);
  const reorgDepth = integer(raw, 'reorgDepth', 1);
  const finalityLag = integer(raw, 'finalityLag', 1);
  if (finalityLag <= reorgDepth) {
    throw new DevnetConfigError('finalityLag', finalityLag, `an integer greater than devnet.reorgDepth (${reorgDepth}), so a reorg never replaces a finalized block`);
  }
  const retainBlocks = integer(raw, 'retainBlocks', 1);
  if (retainBlocks <= finalityLag) {
    throw new DevnetConfigError('retainBlocks', retainBlocks, `an integer greater than devnet.finalityLag (${finalityLag}), so the finalized block stays readable`);
  }
  const gasLimit = positiveQuantity(raw, 'gasLimit', 1n);
  const minimumGas = setupGas(accounts);
  if (gasLimit < minimumGas) {
    throw new DevnetConfigError('gasLimit', gasLimit, `at least ${minimumGas}, the gas of block 1's token and pool setup for ${accounts} accounts`);
  }
  return {
    seed: seed(raw),
    chainId: integer(raw, 'chainId', 1),
    genesisTimestamp: integer(raw, 'genesisTimestamp', 0),
    blockTimeMs: integer(raw, 'blockTimeMs', 1),
    gasLimit,
    transactionsPerBlock: integer(raw, 'transactionsPerBlock', 0, MAX_TRANSACTIONS_PER_BLOCK),
    blobTransactionsPerBlock: averageBlobTransactions(raw),
    maxBlobsPerTransaction: integer(raw, 'maxBlobsPerTransaction', 1, MAX_BLOBS_PER_TRANSACTION),
    accounts,
    reorgEvery: integer(raw, 'reorgEvery', 0),
    reorgDepth,
    finalityLag,
    retainBlocks,
    forks: forks(raw),
    bpo1Blob: bpo1Blob(raw),
  };
}
