/**
 * The chain the node serves, resolved at start from the configured source: its id, a network
 * name, the checked fork schedule (fork ids, blob parameters) and the genesis. The devnet's comes
 * from `[devnet]`; an upstream's from `sources.live.genesis_file` (geth genesis.json), for
 * mainnet the built-in schedule, else the upstream's `eth_config` (EIP-7910) when it determines the
 * schedule — and when `eth_config` and a genesis file or the built-in schedule are both there, they
 * must agree (a mismatch stops start-up naming both); a stored (imported) chain's, with no live
 * source, from `sources.live.genesis_file` alone.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { devnetForkSchedule, devnetGenesis, resolveDevnetConfig, secondsPerBlock, type DevnetConfig, type DevnetConfigInput } from '../../net/devnet/index.js';
import { MAINNET_GENESIS_HASH, MAINNET_GENESIS_TIMESTAMP, MAINNET_SCHEDULE, type ForkSchedule } from '../../net/eth/fork-schedule.js';
import { parseGethGenesis, type ParsedGenesis } from '../../net/eth/genesis.js';
import { buildGenesisBlock } from '../../net/eth/genesis-state.js';
import { createRpcClient } from '../../net/rpc/client.js';
import { checkP2pConfig } from '../peers/config-checks.js';
import { UpstreamError } from '../../net/rpc/errors.js';
import { ethConfigMismatches, parseEthConfig, scheduleFromEthConfig, type EthConfig } from '../../net/rpc/eth-config.js';
import type { Hex } from '../../net/eth/hex.js';
import { ConfigError } from './config.js';
import type { NodeConfig } from './config-schema.js';

export interface ChainSpec {
  readonly chainId: number;
  readonly network: string;
  readonly schedule: ForkSchedule;
  readonly genesis: { readonly hash: Hex; readonly timestamp: number };
  /** The settings that generate this chain (devnet only), recorded in the store and checked on every start. */
  readonly generator?: Readonly<Record<string, string>>;
  /** Where the fork and blob schedule came from (BlobSchedule.source); `chain_spec` when absent. */
  readonly scheduleSource?: 'chain_spec' | 'eth_config';
}

/** Every resolved devnet setting that shapes the chain (the timer pace only through whole seconds per block; the in-memory window not at all). */
function devnetGenerator(devnet: DevnetConfig): Record<string, string> {
  const { retainBlocks: _memoryOnly, blockTimeMs: _pace, forks, bpo1Blob, ...rest } = devnet;
  const entries: [string, unknown][] = [
    ...Object.entries(rest),
    ['secondsPerBlock', secondsPerBlock(devnet)],
    ...Object.entries(forks).map(([fork, offset]): [string, unknown] => [`forks.${fork}`, offset]),
    ...Object.entries(bpo1Blob).map(([field, value]): [string, unknown] => [`bpo1Blob.${field}`, value]),
    // The genesis commits to a state (funded senders, contracts' stand-in code) since `chain-node devnet genesis`;
    // a store made before has no such entry, and start-up says it comes from an earlier version.
    ['genesisState', 'alloc-v1'],
  ];
  return Object.fromEntries(entries.map(([key, value]) => [key, String(value)]));
}

export function devnetInput(config: NodeConfig): DevnetConfigInput {
  const d = config.devnet;
  return {
    seed: d.seed, chainId: d.chain_id, blockTimeMs: d.block_time_ms, transactionsPerBlock: d.transactions_per_block,
    blobTransactionsPerBlock: d.blob_transactions_per_block, maxBlobsPerTransaction: d.max_blobs_per_transaction, accounts: d.accounts,
    reorgEvery: d.reorg_every, reorgDepth: d.reorg_depth, finalityLag: d.finality_lag,
    forks: { prague: d.prague_after_seconds, osaka: d.osaka_after_seconds, bpo1: d.bpo1_after_seconds },
  };
}

/** The upstream's chain id and genesis block (the genesis hash and timestamp anchor fork ids). */
/** The upstream's `eth_config`, or null when it does not serve the method (or answers it with an error). */
async function upstreamEthConfig(config: NodeConfig): Promise<EthConfig | null> {
  const live = config.sources.live;
  const client = createRpcClient({ url: live.url, timeoutMs: live.request_timeout_ms, maxRetries: live.max_retries, backoffInitialMs: live.backoff_initial_ms, backoffMaxMs: live.backoff_max_ms });
  try {
    return parseEthConfig(await client.call<unknown>('eth_config', []));
  } catch (error) {
    if (error instanceof UpstreamError && error.failure === 'rpc') return null;
    throw error;
  }
}

function checkAgainstEthConfig(ethConfig: EthConfig | null, schedule: ForkSchedule, key: string, value: string): void {
  if (ethConfig === null) return;
  const mismatches = ethConfigMismatches(ethConfig, schedule);
  if (mismatches.length > 0) throw new ConfigError([{ key, value, expected: `a schedule that agrees with the upstream's eth_config; they differ: ${mismatches.join('; ')}` }]);
}

async function upstreamIdentity(config: NodeConfig): Promise<{ chainId: number; genesis: { hash: Hex; timestamp: number } }> {
  const live = config.sources.live;
  const client = createRpcClient({ url: live.url, timeoutMs: live.request_timeout_ms, maxRetries: live.max_retries, backoffInitialMs: live.backoff_initial_ms, backoffMaxMs: live.backoff_max_ms });
  const [chainId, genesis] = await Promise.all([
    client.call<string>('eth_chainId', []),
    client.call<{ hash: Hex; timestamp: string } | null>('eth_getBlockByNumber', ['0x0', false]),
  ]);
  if (!genesis) throw new Error(`the upstream ${client.endpoint} has no genesis block`);
  return { chainId: Number(BigInt(chainId)), genesis: { hash: genesis.hash, timestamp: Number(BigInt(genesis.timestamp)) } };
}

/** Reads and parses a geth genesis.json; an unreadable or invalid file is a ConfigError naming `key`. */
export function readGenesisFile(path: string, key: string): ParsedGenesis {
  try {
    return parseGethGenesis(JSON.parse(readFileSync(path, 'utf8')));
  } catch (error) {
    throw new ConfigError([{ key, value: JSON.stringify(path), expected: `a readable geth genesis.json (${(error as Error).message})` }]);
  }
}

/** The spec of a chain known only from its genesis.json (an imported chain): the genesis hash is computed from the alloc. */
export function genesisFileSpec(genesis: ParsedGenesis): ChainSpec {
  if (genesis.chainId > BigInt(Number.MAX_SAFE_INTEGER)) throw new ConfigError([{ key: 'sources.live.genesis_file', value: genesis.chainId.toString(), expected: 'a chain id below 2^53' }]);
  const chainId = Number(genesis.chainId);
  const block = buildGenesisBlock(genesis);
  return { chainId, network: chainId === 1 ? 'mainnet' : `chain-${chainId}`, schedule: genesis.schedule, genesis: { hash: block.hash, timestamp: block.header.timestamp } };
}

export async function resolveChainSpec(config: NodeConfig, configDir: string): Promise<ChainSpec> {
  if (config.sources.live.kind === 'none') {
    const file = config.sources.live.genesis_file;
    if (file === '') throw new ConfigError([{ key: 'sources.live.genesis_file', value: '""', expected: 'the geth genesis.json of the stored (imported) chain when sources.live.kind = "none"' }]);
    return genesisFileSpec(readGenesisFile(resolve(configDir, file), 'sources.live.genesis_file'));
  }
  if (config.sources.live.kind === 'p2p') {
    // The devnet's chain (from [devnet], served over RLPx by a devnet node) unless a genesis.json names another.
    const file = config.sources.live.genesis_file;
    checkP2pConfig(config, file === '');
    if (file !== '') return genesisFileSpec(readGenesisFile(resolve(configDir, file), 'sources.live.genesis_file'));
    const devnet = resolveDevnetConfig(devnetInput(config));
    const genesis = devnetGenesis(devnet);
    return { chainId: devnet.chainId, network: 'devnet', schedule: devnetForkSchedule(devnet), genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } };
  }
  if (config.sources.live.kind === 'devnet') {
    const devnet = resolveDevnetConfig(devnetInput(config));
    const genesis = devnetGenesis(devnet);
    return { chainId: devnet.chainId, network: 'devnet', schedule: devnetForkSchedule(devnet), genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp }, generator: devnetGenerator(devnet) };
  }
  const { url, genesis_file: genesisFile } = config.sources.live;
  if (url === '') throw new ConfigError([{ key: 'sources.live.url', value: '""', expected: 'the upstream JSON-RPC URL when sources.live.kind = "rpc"' }]);
  const [{ chainId, genesis }, ethConfig] = await Promise.all([upstreamIdentity(config), upstreamEthConfig(config)]);
  if (genesisFile !== '') {
    const parsed = readGenesisFile(resolve(configDir, genesisFile), 'sources.live.genesis_file');
    if (Number(parsed.chainId) !== chainId) throw new ConfigError([{ key: 'sources.live.genesis_file', value: JSON.stringify(genesisFile), expected: `a genesis for the upstream's chain ${chainId} (it names chain ${parsed.chainId})` }]);
    checkAgainstEthConfig(ethConfig, parsed.schedule, 'sources.live.genesis_file', JSON.stringify(genesisFile));
    return { chainId, network: chainId === 1 ? 'mainnet' : `chain-${chainId}`, schedule: parsed.schedule, genesis };
  }
  if (chainId === 1) {
    if (genesis.hash !== MAINNET_GENESIS_HASH) throw new Error(`the upstream says chain 1 but its genesis is ${genesis.hash}`);
    checkAgainstEthConfig(ethConfig, MAINNET_SCHEDULE, 'sources.live.url', JSON.stringify(config.sources.live.url));
    return { chainId, network: 'mainnet', schedule: MAINNET_SCHEDULE, genesis: { hash: MAINNET_GENESIS_HASH, timestamp: MAINNET_GENESIS_TIMESTAMP } };
  }
  let why = 'the upstream does not serve eth_config';
  if (ethConfig !== null) {
    const derived = scheduleFromEthConfig(ethConfig, genesis);
    if (derived.ok) {
      if (Number(derived.schedule.chainId) !== chainId) throw new ConfigError([{ key: 'sources.live.url', value: JSON.stringify(config.sources.live.url), expected: `an upstream whose eth_config names its own chain ${chainId} (it names ${derived.schedule.chainId})` }]);
      return { chainId, network: `chain-${chainId}`, schedule: derived.schedule, genesis, scheduleSource: 'eth_config' };
    }
    why = `its eth_config does not determine the schedule: ${derived.reason}`;
  }
  throw new ConfigError([{ key: 'sources.live.genesis_file', value: '""', expected: `a geth genesis.json for the upstream's chain ${chainId} (only mainnet is built in, and ${why}); when the upstream is a chain-data-node devnet, \`chain-node devnet genesis --config <its config> --out FILE\` writes its genesis.json` }]);
}
