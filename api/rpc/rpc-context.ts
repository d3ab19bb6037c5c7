/**
 * What every JSON-RPC method reads from: the chain tables (through ChainReader), the chain the node
 * serves, the configured limits and the capabilities document. One context per listener worker.
 */
import type { ForkIdGenesis } from '../../net/eth/fork-id.js';
import type { ForkSchedule } from '../../net/eth/fork-schedule.js';
import type { Address } from '../../net/eth/hex.js';
import type { Store } from '../../store/store.js';
import { ChainReader, type BlockCacheLimits } from './chain-reader.js';
import { MAINNET_DEPOSIT_CONTRACT, ZERO_ADDRESS } from './eth-config.js';

export interface RpcLimits {
  /** Requests in one batch. */
  readonly maxBatchRequests: number;
  /** Blocks one eth_getLogs call may scan (toBlock − fromBlock + 1). */
  readonly maxLogsBlockRange: number;
  /** Logs one eth_getLogs call may return. */
  readonly maxLogsResults: number;
}

export interface RpcChain {
  readonly chainId: number;
  readonly schedule: ForkSchedule;
  readonly genesis: ForkIdGenesis;
  /** Defaults to mainnet's deposit contract on chain 1 and the zero address elsewhere. */
  readonly depositContractAddress?: Address;
}

/** On-demand JSON-RPC history as this worker serves it (api/rpc/history-hole.ts). */
export interface RpcHistory {
  /** Blocks one request may fetch (`[history] on_demand_max_blocks`). */
  readonly maxBlocks: number;
  /** The source can place a block or transaction hash (kind rpc). */
  readonly locator: boolean;
}

export interface RpcContext {
  readonly chain: ChainReader;
  /** null: on-demand history is off; a block below the recorded chain is range_incomplete. */
  readonly history: RpcHistory | null;
  readonly spec: Required<RpcChain>;
  readonly limits: RpcLimits;
  /** The `node_getCapabilities` result: the same JSON as `/v1/capabilities`, built per call (a rebuild started
   * after the listener did shows in it, as it does on `/v1/capabilities`). */
  readonly capabilitiesJson: () => string;
  readonly clientVersion: string;
}

export interface RpcContextOptions {
  readonly store: Store;
  readonly chain: RpcChain;
  readonly limits: RpcLimits;
  /** The capabilities document, or a function building it at each call (what the node runs). */
  readonly capabilities: unknown;
  readonly history?: RpcHistory | null;
  /** Decoded blocks (with their renderings) kept per worker: the defaults of `[rpc] block_cache_*` when absent. */
  readonly blockCache?: BlockCacheLimits;
  readonly clientVersion?: string;
}

export function createRpcContext(options: RpcContextOptions): RpcContext {
  const depositContractAddress = options.chain.depositContractAddress ?? (options.chain.chainId === 1 ? MAINNET_DEPOSIT_CONTRACT : ZERO_ADDRESS);
  return {
    chain: new ChainReader(options.store, options.blockCache ?? { entries: 256, bytes: 128 * 1024 * 1024 }),
    history: options.history ?? null,
    spec: { ...options.chain, depositContractAddress },
    limits: options.limits,
    capabilitiesJson: capabilitiesJson(options.capabilities),
    clientVersion: options.clientVersion ?? 'chain-data-node',
  };
}

function capabilitiesJson(capabilities: unknown): () => string {
  if (typeof capabilities === 'function') return () => JSON.stringify((capabilities as () => unknown)());
  const json = JSON.stringify(capabilities);
  return () => json;
}
