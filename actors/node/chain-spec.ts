/**
 * The chain the node serves, resolved at start from the configured source: its id, a network
 * name, the checked fork schedule (fork ids, blob parameters) and the genesis. The devnet's comes
 * from `[devnet]`; an upstream's from `sources.live.genesis_file` (geth genesis.json) or, for
 * mainnet, the built-in schedule.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { devnetForkSchedule, devnetGenesis, resolveDevnetConfig, type DevnetConfigInput } from '../../net/devnet/index.js';
import { MAINNET_GENESIS_HASH, MAINNET_GENESIS_TIMESTAMP, MAINNET_SCHEDULE, type ForkSchedule } from '../../net/eth/fork-schedule.js';
import { parseGethGenesis } from '../../net/eth/genesis.js';
import { buildGenesisBlock } from '../../net/eth/genesis-state.js';
import type { Hex } from '../../net/eth/hex.js';
import { ConfigError } from './config.js';
import type { NodeConfig } from './config-schema.js';

export interface ChainSpec {
  readonly chainId: number;
  readonly network: string;
  readonly schedule: ForkSchedule;
  readonly genesis: { readonly hash: Hex; readonly timestamp: number };
}

export function devnetInput(config: NodeConfig): DevnetConfigInput {
  const d = config.devnet;
  return {
    seed: d.seed, chainId: d.chain_id, blockTimeMs: d.block_time_ms, transactionsPerBlock: d.transactions_per_block,
    blobTransactionsPerBlock: d.blob_transactions_per_block, maxBlobsPerTransaction: d.max_blobs_per_transaction,
    reorgEvery: d.reorg_every, reorgDepth: d.reorg_depth, finalityLag: d.finality_lag,
    forks: { prague: d.prague_after_seconds, osaka: d.osaka_after_seconds, bpo1: d.bpo1_after_seconds },
  };
}

async function upstreamChainId(url: string, timeoutMs: number): Promise<number> {
  const response = await fetch(url, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await response.json()) as { result?: string; error?: { message: string } };
  if (!body.result) throw new Error(`eth_chainId failed: ${body.error?.message ?? `HTTP ${response.status}`}`);
  return Number(BigInt(body.result));
}

export async function resolveChainSpec(config: NodeConfig, configDir: string): Promise<ChainSpec> {
  if (config.sources.live.kind === 'devnet') {
    const devnet = resolveDevnetConfig(devnetInput(config));
    const genesis = devnetGenesis(devnet);
    return { chainId: devnet.chainId, network: 'devnet', schedule: devnetForkSchedule(devnet), genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } };
  }
  const { url, genesis_file: genesisFile, request_timeout_ms: timeout } = config.sources.live;
  if (url === '') throw new ConfigError([{ key: 'sources.live.url', value: '""', expected: 'the upstream JSON-RPC URL when sources.live.kind = "rpc"' }]);
  const chainId = await upstreamChainId(url, timeout);
  if (genesisFile !== '') {
    const parsed = parseGethGenesis(JSON.parse(readFileSync(resolve(configDir, genesisFile), 'utf8')));
    if (Number(parsed.chainId) !== chainId) throw new ConfigError([{ key: 'sources.live.genesis_file', value: JSON.stringify(genesisFile), expected: `a genesis for the upstream's chain ${chainId} (it names chain ${parsed.chainId})` }]);
    const genesis = await buildGenesisBlock(parsed);
    return { chainId, network: chainId === 1 ? 'mainnet' : `chain-${chainId}`, schedule: parsed.schedule, genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } };
  }
  if (chainId === 1) return { chainId, network: 'mainnet', schedule: MAINNET_SCHEDULE, genesis: { hash: MAINNET_GENESIS_HASH, timestamp: MAINNET_GENESIS_TIMESTAMP } };
  throw new ConfigError([{ key: 'sources.live.genesis_file', value: '""', expected: `a geth genesis.json for the upstream's chain ${chainId} (only mainnet is built in)` }]);
}
