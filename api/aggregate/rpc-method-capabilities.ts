/**
 * `ethereumRpc.methods` of `/v1/capabilities` (spec §2.8): what this node's JSON-RPC listeners
 * serve today. The JSON-RPC listener is not part of this build, so every method the spec names is
 * reported unsupported with the reason, and state methods carry the permanent `evm_state_unavailable`.
 */

export interface RpcMethodCapability {
  readonly recent: boolean;
  readonly historical: boolean | 'on_demand_by_number';
  readonly supported: boolean;
  readonly reason?: string;
}

/** The methods spec §4.7 names as supported once the JSON-RPC listener runs. */
const LISTENER_METHODS = [
  'eth_blockNumber',
  'eth_getBlockByNumber',
  'eth_getBlockReceipts',
  'eth_getTransactionReceipt',
  'eth_config',
  'eth_subscribe',
  'eth_unsubscribe',
  'node_getCapabilities',
] as const;

/** Methods that need EVM state, which this node never keeps. */
const STATE_METHODS = ['eth_getBalance', 'eth_getCode', 'eth_getStorageAt', 'eth_getTransactionCount', 'eth_call', 'eth_estimateGas', 'eth_getProof'] as const;

export function rpcMethodCapabilities(): Record<string, RpcMethodCapability> {
  const methods: Record<string, RpcMethodCapability> = {};
  for (const name of LISTENER_METHODS) methods[name] = { recent: false, historical: false, supported: false, reason: 'rpc_listener_unavailable' };
  for (const name of STATE_METHODS) methods[name] = { recent: false, historical: false, supported: false, reason: 'evm_state_unavailable' };
  return methods;
}
