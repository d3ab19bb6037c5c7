/**
 * On-demand history in the dispatcher (api/rpc/history-hole.ts): a method that meets a block below the recorded
 * chain throws a HistoryHole; without on-demand history it is answered at once (range_incomplete, or null for an
 * unknown hash); a first pass collects the holes of a body; the second pass answers a hole still there with the
 * fill's failure. Over a scripted chain view: the recorded chain is blocks 50..100, nothing below is recorded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerBody } from '../../../api/rpc/dispatch.js';
import type { HoleRequest } from '../../../api/rpc/history-hole.js';
import type { RpcContext, RpcHistory } from '../../../api/rpc/rpc-context.js';
import { sourceUnavailable } from '../../../api/rpc/rpc-errors.js';

function context(history: RpcHistory | null): RpcContext {
  const ref = (number: number) => ({ number, hash: Buffer.alloc(32, number) });
  const chain = {
    store: { chain: { txIndex: { getBinary: () => undefined } } },
    head: () => ref(100), earliest: () => ref(50), finalized: () => ref(90),
    canonicalBlock: () => undefined, historicalBlock: () => undefined, block: () => undefined, historicalBlockRecorded: () => false,
  };
  return { chain, history, limits: { maxBatchRequests: 10, maxLogsBlockRange: 1000, maxLogsResults: 1000 }, spec: { chainId: 1337 }, capabilitiesJson: '{}', clientVersion: 'test' } as unknown as RpcContext;
}

const request = (method: string, params: unknown[], id = 1) => ({ jsonrpc: '2.0', id, method, params });
const answer = (ctx: RpcContext, body: unknown, options: Parameters<typeof answerBody>[2] = {}) => JSON.parse(answerBody(ctx, JSON.stringify(body), options)!.toString('utf8'));
const TX = `0x${'ab'.repeat(32)}`;

test('without on-demand history a hole is answered at once: range_incomplete for a number, null for an unknown hash', () => {
  const ctx = context(null);
  const block = answer(ctx, request('eth_getBlockByNumber', ['0x5', false]));
  assert.equal(block.error.code, -32002);
  assert.equal(block.error.data.code, 'range_incomplete');
  assert.equal(block.error.data.block, 5);
  assert.deepEqual(answer(ctx, request('eth_getTransactionReceipt', [TX])), { jsonrpc: '2.0', id: 1, result: null });
  assert.equal(answer(ctx, request('eth_getLogs', [{ fromBlock: '0x2d', toBlock: '0x3c' }])).error.data.code, 'range_incomplete');
});

test('with on-demand history the first pass collects the holes of a body; the second answers them with the fill failure or their own answer', () => {
  const ctx = context({ maxBlocks: 10, locator: true });
  const holes: HoleRequest[] = [];
  const body = [
    request('eth_getBlockByNumber', ['0x5', false], 1), request('eth_chainId', [], 2), request('eth_getTransactionReceipt', [TX], 3),
    request('eth_getLogs', [{ fromBlock: '0x2d', toBlock: '0x3c' }], 4), request('eth_getBlockByHash', [TX, false], 5),
  ];
  answer(ctx, body, { holes });
  assert.deepEqual(holes, [
    { kind: 'range', from: 5, to: 5 }, { kind: 'transaction', hash: TX }, { kind: 'range', from: 45, to: 49 }, { kind: 'block', hash: TX },
  ]);
  // Filled (but still not there, as a lying locator would leave it): hashes answer null, numbers range_incomplete.
  const second = answer(ctx, body) as Array<{ id: number; result?: unknown; error?: { data: { code: string } } }>;
  assert.deepEqual(second.map((a) => a.error?.data.code ?? a.result), ['range_incomplete', '0x539', null, 'range_incomplete', null]);
  // The fill failed: every hole answers with its failure.
  const failed = answer(ctx, body, { holeFailure: sourceUnavailable('block 5: verification failed: receiptsRoot mismatch', { block: 5 }) }) as Array<{ error?: { code: number; message: string; data: { code: string; block: number } } }>;
  for (const index of [0, 2, 3, 4]) {
    assert.equal(failed[index]!.error!.code, -32002);
    assert.deepEqual(failed[index]!.error!.data, { code: 'source_unavailable', block: 5 });
  }
});

test('the on-demand range maximum is enforced before anything is asked', () => {
  const ctx = context({ maxBlocks: 10, locator: false });
  const holes: HoleRequest[] = [];
  const wide = answer(ctx, request('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x3c' }]), { holes });
  assert.equal(wide.error.code, -32005);
  assert.equal(wide.error.data.code, 'query_too_expensive');
  assert.deepEqual(holes, []);
  // Without a locator an unknown transaction is null at once.
  assert.deepEqual(answer(ctx, request('eth_getTransactionReceipt', [TX]), { holes }), { jsonrpc: '2.0', id: 1, result: null });
  assert.deepEqual(holes, []);
});
