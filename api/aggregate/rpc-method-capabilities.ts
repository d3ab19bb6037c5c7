/**
 * `ethereumRpc.methods` and `ethereumRpc.limits` of `/v1/capabilities` (spec §2.8), also the
 * `node_getCapabilities` result: what this node's JSON-RPC listeners serve. Methods answer from
 * the retained blocks (`recent`), not from on-demand history (`historical` false); state methods
 * carry the permanent `evm_state_unavailable`. Without a configured JSON-RPC lane (a listener
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

/** Methods answered from the retained blocks. */
export const SERVED_RPC_METHODS = [
  'eth_blockNumber', 'eth_chainId', 'eth_getBlockByNumber', 'eth_getBlockByHash', 'eth_getBlockReceipts', 'eth_getTransactionReceipt',
  'eth_getTransactionByHash', 'eth_blobBaseFee', 'eth_syncing', 'eth_config', 'eth_getLogs', 'node_getCapabilities', 'net_version', 'web3_clientVersion',
] as const;

/** WebSocket only. */
const SUBSCRIPTION_METHODS = ['eth_subscribe', 'eth_unsubscribe'] as const;

/** Methods that need EVM state, which this node never keeps. */
const STATE_METHODS = ['eth_getBalance', 'eth_getCode', 'eth_getStorageAt', 'eth_getTransactionCount', 'eth_call', 'eth_estimateGas', 'eth_getProof'] as const;

export function rpcMethodCapabilities(served: RpcServedLimits | null): Record<string, RpcMethodCapability> {
  const methods: Record<string, RpcMethodCapability> = {};
  for (const name of [...SERVED_RPC_METHODS, ...SUBSCRIPTION_METHODS]) {
    methods[name] = served ? { recent: true, historical: false, supported: true } : { recent: false, historical: false, supported: false, reason: 'rpc_listener_unavailable' };
  }
  for (const name of STATE_METHODS) methods[name] = { recent: false, historical: false, supported: false, reason: 'evm_state_unavailable' };
  return methods;
}
