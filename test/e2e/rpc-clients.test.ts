/**
 * The JSON-RPC listeners through real third-party clients against the real node on its devnet:
 * viem over HTTP and WebSocket (blocks, receipts, logs, watchBlocks and watchEvent across devnet
 * reorgs, with removed logs), the `ws` package for the 1013 close of a subscriber that stops
 * reading, and plain fetch for the HTTP-level limits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import WebSocket from 'ws';
import { createPublicClient, http, parseAbiItem, webSocket, type Block, type Log } from 'viem';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

async function startNode(sets: readonly string[]): Promise<NodeProcess> {
  const node = await startNodeProcess({ sets: ['devnet.block_time_ms=300', 'devnet.reorg_every=6', 'devnet.reorg_depth=2', 'devnet.finality_lag=4', 'log.level=warn', ...sets] });
  return node;
}

test('viem reads blocks, receipts and logs over HTTP, and watches blocks and events over WebSocket across reorgs', async (t) => {
  const node = await startNode([]);
  const client = createPublicClient({ transport: http(node.rpcUrl, { timeout: 30_000 }) });
  const wsClient = createPublicClient({ transport: webSocket(node.wsUrl, { timeout: 30_000, reconnect: false }) });
  const unwatch: Array<() => void> = [];
  t.after(async () => {
    for (const stop of unwatch) stop();
    (await wsClient.transport.getRpcClient()).close();
    await node.stop();
    removeDir(node.dir);
  });

  // A finalized block: the devnet reorgs every 6 blocks, and a block read at the head may be gone by the next call.
  await waitUntil(node, async () => (await client.getBlock({ blockTag: 'finalized' })).number >= 3n, 60_000);
  assert.equal(await client.getChainId(), 1337);
  const block = await client.getBlock({ blockTag: 'finalized', includeTransactions: true });
  assert.ok(block.transactions.length > 0);
  const tx = block.transactions[0]!;
  const receipt = await client.getTransactionReceipt({ hash: tx.hash });
  assert.equal(receipt.blockHash, block.hash);
  assert.equal(receipt.from, tx.from);
  const byNumber = await client.getBlock({ blockNumber: block.number! });
  assert.deepEqual(byNumber.transactions, block.transactions.map((t) => t.hash));
  const logs = await client.getLogs({ event: TRANSFER, fromBlock: 1n, toBlock: block.number! });
  assert.ok(logs.length > 0 && logs.every((log) => log.eventName === 'Transfer' && log.args.value !== undefined));
  await assert.rejects(client.getBalance({ address: tx.from }), (error: Error & { cause?: { code?: number } }) => /not supported/.test(error.message));

  const blocks: Block[] = [];
  const events: Log[] = [];
  const errors: Error[] = [];
  unwatch.push(wsClient.watchBlocks({ onBlock: (b) => blocks.push(b), onError: (error) => errors.push(error) }));
  unwatch.push(wsClient.watchEvent({ event: TRANSFER, onLogs: (batch) => events.push(...batch), onError: (error) => errors.push(error) }));
  // A reorg every 6 blocks at 300 ms: the abandoned blocks' logs come back removed, then the replacement's.
  await waitUntil(node, async () => events.some((log) => log.removed) && blocks.length >= 8, 60_000);
  const firstRemoved = events.findIndex((log) => log.removed);
  const removed = events[firstRemoved]!;
  // The replacement branch's logs at that height arrive after the removed ones.
  await waitUntil(node, async () => events.some((log, i) => i > firstRemoved && !log.removed && log.blockNumber === removed.blockNumber), 60_000);
  const removedBlockHash = removed.blockHash;
  assert.ok(!events.slice(firstRemoved).some((log, i) => i > 0 && !log.removed && log.blockHash === removedBlockHash), 'nothing of the abandoned block is re-sent as live');
  // newHeads and the logs are separate subscriptions, and viem fetches each head's block before
  // reporting it: the replacement head can arrive well after the removed logs on a loaded machine.
  const repeated = () => blocks.some((b, i) => i > 0 && b.number! <= blocks[i - 1]!.number!);
  await waitUntil(node, async () => repeated(), 60_000).catch(() => undefined);
  const numbers = blocks.map((b) => b.number!);
  assert.ok(repeated(), `a reorg shows up in newHeads as a repeated height: ${numbers.join(',')}`);
  assert.equal(await wsClient.getBlockNumber() >= numbers.at(-1)!, true, 'ordinary calls work on the WebSocket');
  assert.deepEqual(errors, []);
});

test('a subscriber that stops reading is closed with 1013 once its event channel is full, while others keep receiving', async (t) => {
  const node = await startNode(['devnet.block_time_ms=150', 'devnet.reorg_every=0', 'rpc.ws_max_buffered_bytes=65536']);
  t.after(async () => {
    await node.stop();
    removeDir(node.dir);
  });
  const open = (url: string) => new Promise<WebSocket>((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
  const slow = await open(node.wsUrl);
  const healthy = await open(node.wsUrl);
  t.after(() => { slow.terminate(); healthy.terminate(); });
  const SUBSCRIPTIONS = 1000;
  const answered = new Promise<void>((resolve) => {
    let count = 0;
    slow.on('message', () => { if (++count === SUBSCRIPTIONS) resolve(); });
  });
  for (let i = 0; i < SUBSCRIPTIONS; i += 1) slow.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_subscribe', params: ['newHeads'] }));
  await answered;
  const closed = new Promise<number>((resolve) => slow.once('close', (code) => resolve(code)));
  // Stop reading: the kernel buffers fill, then the node's queue for this client passes its bound.
  (slow as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();

  let healthyHeads = 0;
  healthy.on('message', (data) => { if (String(data).includes('eth_subscription')) healthyHeads += 1; });
  healthy.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
  const lagging = async () => (await (await fetch(`${node.baseUrl}/metrics`)).text()).match(/chain_node_rpc_ws_lagging_closed_total(?:\{[^}]*\})? ([1-9])/) !== null;
  await waitUntil(node, lagging, 60_000);
  (slow as unknown as { _socket: { resume(): void } })._socket.resume();
  assert.equal(await closed, 1013);
  const before = healthyHeads;
  await waitUntil(node, async () => healthyHeads > before + 2, 60_000);
});

test('the HTTP listener answers parse errors, oversized bodies and non-POST requests in JSON-RPC shape', async (t) => {
  const node = await startNode(['rpc.max_request_body_bytes=1024']);
  t.after(async () => {
    await node.stop();
    removeDir(node.dir);
  });
  const post = (body: string) => fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const parse = await post('{"jsonrpc":"2.0","id":1,');
  assert.equal(parse.status, 200);
  assert.deepEqual(await parse.json(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
  const big = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [{ topics: ['0x' + 'ab'.repeat(2000)] }] }));
  assert.equal(big.status, 413);
  assert.equal(((await big.json()) as { error: { code: number } }).error.code, -32005);
  const get = await fetch(node.rpcUrl);
  assert.equal(get.status, 405);
  const batch = await (await post(JSON.stringify([{ jsonrpc: '2.0', id: 2, method: 'eth_chainId' }, { jsonrpc: '2.0', id: 1, method: 'eth_getCode', params: ['0x' + '11'.repeat(20), 'latest'] }]))).json() as Array<{ id: number; result?: string; error?: { code: number } }>;
  assert.deepEqual(batch.map((r) => [r.id, r.result ?? r.error?.code]), [[2, '0x539'], [1, -32004]]);
  const capabilities = await (await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'node_getCapabilities' }))).json() as { result: unknown };
  assert.deepEqual(capabilities.result, await (await fetch(`${node.baseUrl}/v1/capabilities`)).json());
  const methods = (capabilities.result as { ethereumRpc: { methods: Record<string, { supported: boolean }>; limits: { maxLogsBlockRange: number } } }).ethereumRpc;
  assert.equal(methods.methods.eth_getLogs?.supported, true);
  assert.equal(methods.limits.maxLogsBlockRange, 10_000);
});
