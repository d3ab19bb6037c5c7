import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rpcMethodCapabilities, type RpcServedLimits } from '../../../api/aggregate/rpc-method-capabilities.js';

const LIMITS: RpcServedLimits = { maxRequestBodyBytes: 1, maxBatchRequests: 1, maxLogsBlockRange: 1, maxLogsResults: 1, maxSubscriptionsPerConnection: 1, wsMaxBufferedBytes: 1 };
const BY_NUMBER = ['eth_getBlockByNumber', 'eth_getBlockReceipts', 'eth_getLogs'];
const BY_HASH = ['eth_getBlockByHash', 'eth_getTransactionReceipt', 'eth_getTransactionByHash'];

test('historical is on_demand_by_number per method only where on-demand history serves it, else false with the reason', () => {
  const off = rpcMethodCapabilities(LIMITS, null);
  for (const name of [...BY_NUMBER, ...BY_HASH]) assert.deepEqual(off[name], { recent: true, supported: true, historical: false, reason: 'history_source_unavailable' }, name);
  assert.deepEqual(off.eth_blockNumber, { recent: true, supported: true, historical: false });

  const noLocator = rpcMethodCapabilities(LIMITS, { onDemand: true, locator: false });
  for (const name of BY_NUMBER) assert.equal(noLocator[name]!.historical, 'on_demand_by_number', name);
  assert.deepEqual(noLocator.eth_getTransactionReceipt, { recent: true, supported: true, historical: false, reason: 'transaction_locator_disabled' });
  assert.deepEqual(noLocator.eth_getBlockByHash, { recent: true, supported: true, historical: false, reason: 'block_locator_disabled' });

  const full = rpcMethodCapabilities(LIMITS, { onDemand: true, locator: true });
  for (const name of [...BY_NUMBER, ...BY_HASH]) assert.deepEqual(full[name], { recent: true, supported: true, historical: 'on_demand_by_number' }, name);
  assert.equal(full.eth_getBalance!.reason, 'evm_state_unavailable');
  assert.equal(rpcMethodCapabilities(null, { onDemand: true, locator: true }).eth_getLogs!.reason, 'rpc_listener_unavailable');
});
