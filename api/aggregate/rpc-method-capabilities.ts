/**
 * `ethereumRpc.methods` and `ethereumRpc.limits` of `/v1/capabilities` (spec §2.8), also the
 * `node_getCapabilities` result: what this node's JSON-RPC listeners serve. Methods answer from
 * the retained blocks (`recent`); with on-demand history (a history source, `[history] on_demand`)
 * the methods that name blocks fetch, verify and record older ones (`historical: "on_demand_by_number"`):
 * by number directly, by hash (block or transaction) only through a source's locator (kind `rpc`);
 * otherwise `historical` is false with the reason. State methods carry the permanent `evm_state_unavailable`. Without a configured JSON-RPC lane (a listener
 * started alone, as some tests do) every method reports `rpc_listener_unavailable`.
 */

export interface RpcMethodCapability {
  readonly recent: boolean;
  readonly historical: boolean | 'on_demand_by_number';
  readonly supported: boolean;
  readonly reason?: string;
}

/** The `[rpc]` limits the JSON-RPC lane enforces, reported so clients can size their calls. */
export interface RpcServedLimits {
  readonly maxRequestBodyBytes: number;
  readonly maxBatchRequests: number;
  readonly maxLogsBlockRange: number;
  readonly maxLogsResults: number;
  readonly maxSubscriptionsPerConnection: number;
  readonly wsMaxBufferedBytes: number;
}

/** On-demand history as configured: off, or on with or without a locator for lookups by hash. */
export interface RpcHistoryCapability {
  readonly onDemand: boolean;
  /** The on-demand source can say which block a hash belongs to (kind rpc). */
  readonly locator: boolean;
}

/** Methods that name blocks by number (or a range of numbers): on demand whenever history is. */
const BY_NUMBER = new Set(['eth_getBlockByNumber', 'eth_getBlockReceipts', 'eth_getLogs', 'debug_getRawHeader', 'debug_getRawBlock', 'debug_getRawReceipts']);
/** Methods that name a block or transaction by hash: on demand through a locator. */
const BY_HASH = new Set(['eth_getBlockByHash', 'eth_getTransactionReceipt', 'eth_getTransactionByHash']);

function historicalOf(name: string, history: RpcHistoryCapability | null): Pick<RpcMethodCapability, 'historical' | 'reason'> {
  if (!BY_NUMBER.has(name) && !BY_HASH.has(name)) return { historical: false };
  if (!history?.onDemand) return { historical: false, reason: 'history_source_unavailable' };
  if (BY_HASH.has(name) && !history.locator) return { historical: false, reason: name === 'eth_getBlockByHash' ? 'block_locator_disabled' : 'transaction_locator_disabled' };
  return { historical: 'on_demand_by_number' };
}

/** Methods answered from the retained blocks. */
export const SERVED_RPC_METHODS = [
  'eth_blockNumber', 'eth_chainId', 'eth_getBlockByNumber', 'eth_getBlockByHash', 'eth_getBlockReceipts', 'eth_getTransactionReceipt',
  'eth_getTransactionByHash', 'eth_blobBaseFee', 'eth_syncing', 'eth_config', 'eth_getLogs', 'node_getCapabilities', 'net_version', 'web3_clientVersion',
  'debug_getRawHeader', 'debug_getRawBlock', 'debug_getRawReceipts',
] as const;

/** WebSocket only. */
const SUBSCRIPTION_METHODS = ['eth_subscribe', 'eth_unsubscribe'] as const;

/** Methods that need EVM state, which this node never keeps. */
const STATE_METHODS = ['eth_getBalance', 'eth_getCode', 'eth_getStorageAt', 'eth_getTransactionCount', 'eth_call', 'eth_estimateGas', 'eth_getProof'] as const;

export function rpcMethodCapabilities(served: RpcServedLimits | null, history: RpcHistoryCapability | null = null): Record<string, RpcMethodCapability> {
  const methods: Record<string, RpcMethodCapability> = {};
  for (const name of [...SERVED_RPC_METHODS, ...SUBSCRIPTION_METHODS]) {
    methods[name] = served ? { recent: true, supported: true, ...historicalOf(name, history) } : { recent: false, historical: false, supported: false, reason: 'rpc_listener_unavailable' };
  }
  for (const name of STATE_METHODS) methods[name] = { recent: false, historical: false, supported: false, reason: 'evm_state_unavailable' };
  return methods;
}
