/**
 * On-demand JSON-RPC history (spec §4.7, §8) end to end: a node following another node's JSON-RPC records the chain
 * from that node's head only; with an rpc history source (a proxy in front of the same node, able to tamper one
 * block's receipts) its JSON-RPC answers older blocks by fetching, verifying and recording them first. Read with
 * viem and compared byte for byte with the upstream's own answers: blocks by number and by hash, a block's
 * receipts, a transaction's receipt (located through the source), logs over an old range. A tampered block is
 * refused with source_unavailable naming the block, never served; the range maximum answers -32005; capabilities
 * report `historical: "on_demand_by_number"`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicClient, http } from 'viem';
import { removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';
import { blockNumber, followerToml, PRODUCER, rpcCall } from './history-support.js';
import { asksReceiptsOf, flipFirstReceiptStatus } from '../support/rpc-proxy.js';

interface RpcRequest { id: unknown; method: string; params: unknown[] }

/** A JSON-RPC proxy in front of `target` that may flip the first receipt's status in the receipts of `block` (either encoding). */
async function startProxy(target: string) {
  let tampered: number | null = null;
  let requests = 0;
  let inFlight = 0;
  let peak = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => void (async () => {
      requests += 1;
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      const body = Buffer.concat(chunks).toString('utf8');
      const forwarded = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).finally(() => { inFlight -= 1; });
      let text = await forwarded.text();
      if (tampered !== null) {
        const calls = ([] as RpcRequest[]).concat(JSON.parse(body) as RpcRequest | RpcRequest[]);
        const ids = new Set(calls.filter((c) => asksReceiptsOf(c, tampered!)).map((c) => c.id));
        if (ids.size > 0) {
          const answers = ([] as Array<{ id: unknown; result: unknown }>).concat(JSON.parse(text));
          for (const answer of answers) if (ids.has(answer.id)) flipFirstReceiptStatus(answer);
          text = JSON.stringify(Array.isArray(JSON.parse(text)) ? answers : answers[0]);
        }
      }
      response.writeHead(forwarded.status, { 'content-type': 'application/json' }).end(text);
    })().catch((error: Error) => response.writeHead(502).end(error.message)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    tamperReceipts: (block: number | null) => { tampered = block; },
    get requests() { return requests; },
    /** The most requests the node had in flight at once. */
    get peak() { return peak; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** The raw bytes of one JSON-RPC answer. */
async function raw(url: string, method: string, params: unknown[]): Promise<string> {
  const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }) });
  return answer.text();
}

const hex = (n: number) => `0x${n.toString(16)}`;

test('on-demand JSON-RPC history: old blocks, receipts, a transaction receipt and logs are fetched, verified and answered as the upstream answers them; a tampered block is refused; limits; capabilities', async (t) => {
  const producer = await startNodeProcess({ sets: PRODUCER });
  t.after(async () => { await producer.stop('SIGKILL'); removeDir(producer.dir); });
  await waitUntil(producer, async () => (await blockNumber(producer)) >= 45, 120_000);
  const proxy = await startProxy(producer.rpcUrl);
  t.after(() => proxy.close());
  const toml = followerToml(producer.rpcUrl, null).replace(`url = "${producer.rpcUrl}"\nsource_concurrency`, `url = "${proxy.url}"\nsource_concurrency`)
    .replace('chunk_blocks = 8', 'chunk_blocks = 8\non_demand_max_blocks = 20');
  assert.match(toml, new RegExp(`id = "honest"\nkind = "rpc"\nurl = "${proxy.url}"`));
  const node = await startNodeProcess({ toml, sets: ['runtime.shutdown_timeout_seconds=3', 'runtime.pool_threads=1'] });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  // Ready means the source follows; the chain lane makes its first block canonical a moment later.
  let earliest: { number: string } | null = null;
  await waitUntil(node, async () => {
    earliest = await rpcCall<{ number: string }>(node, 'eth_getBlockByNumber', ['earliest', false]).catch(() => null);
    return earliest !== null;
  }, 60_000);
  const lowest = Number(BigInt(earliest!.number));
  assert.ok(lowest >= 40, `the follower's recorded chain starts at the producer's head (${lowest})`);

  const capabilities = await rpcCall<{ ethereumRpc: { methods: Record<string, { historical: unknown; reason?: string }> } }>(node, 'node_getCapabilities', []);
  for (const method of ['eth_getBlockByNumber', 'eth_getBlockByHash', 'eth_getBlockReceipts', 'eth_getTransactionReceipt', 'eth_getLogs']) {
    assert.equal(capabilities.ethereumRpc.methods[method]!.historical, 'on_demand_by_number', method);
  }
  assert.deepEqual(await (await fetch(`${node.baseUrl}/v1/capabilities`)).json(), capabilities, '/v1/capabilities says the same');

  // Blocks by number, full transactions: the same bytes as the upstream's answer, through viem too.
  const mine = createPublicClient({ transport: http(node.rpcUrl) });
  const theirs = createPublicClient({ transport: http(producer.rpcUrl) });
  for (const n of [3, 4, 20]) {
    assert.equal(await raw(node.rpcUrl, 'eth_getBlockByNumber', [hex(n), true]), await raw(producer.rpcUrl, 'eth_getBlockByNumber', [hex(n), true]), `block ${n}`);
  }
  assert.deepEqual(await mine.getBlock({ blockNumber: 5n, includeTransactions: true }), await theirs.getBlock({ blockNumber: 5n, includeTransactions: true }));
  // Receipts of a block not fetched yet, and by hash a block only the locator can place.
  assert.equal(await raw(node.rpcUrl, 'eth_getBlockReceipts', [hex(8)]), await raw(producer.rpcUrl, 'eth_getBlockReceipts', [hex(8)]));
  const block30 = await theirs.getBlock({ blockNumber: 30n });
  assert.equal(await raw(node.rpcUrl, 'eth_getBlockByHash', [block30.hash, false]), await raw(producer.rpcUrl, 'eth_getBlockByHash', [block30.hash, false]));
  // A transaction of a block nobody asked for yet: the source's locator names its block, which is proven and recorded.
  const block33 = await theirs.getBlock({ blockNumber: 33n });
  assert.ok(block33.transactions.length > 0, 'the devnet block has transactions');
  const tx = block33.transactions.at(-1)!;
  assert.equal(await raw(node.rpcUrl, 'eth_getTransactionReceipt', [tx]), await raw(producer.rpcUrl, 'eth_getTransactionReceipt', [tx]));
  assert.deepEqual(await mine.getTransactionReceipt({ hash: tx }), await theirs.getTransactionReceipt({ hash: tx }));
  assert.equal(await raw(node.rpcUrl, 'eth_getTransactionReceipt', [`0x${'ab'.repeat(32)}`]), '{"jsonrpc":"2.0","id":7,"result":null}', 'a hash nobody knows is null');

  // Logs over an old range (partly recorded now, partly not): the same answer as the upstream's.
  const filter = { fromBlock: hex(9), toBlock: hex(27) };
  const logs = await raw(node.rpcUrl, 'eth_getLogs', [filter]);
  assert.equal(logs, await raw(producer.rpcUrl, 'eth_getLogs', [filter]));
  assert.ok((JSON.parse(logs) as { result: unknown[] }).result.length > 0, 'the range has logs');
  assert.deepEqual(await mine.getLogs({ fromBlock: 9n, toBlock: 27n }), await theirs.getLogs({ fromBlock: 9n, toBlock: 27n }));
  // Recorded now: answered again without asking the source.
  const asked = proxy.requests;
  assert.equal(await raw(node.rpcUrl, 'eth_getLogs', [filter]), logs);
  assert.equal(proxy.requests, asked, 'recorded history is served from the store');

  // Many requests at once share the source's two request slots (source_concurrency = 2).
  const burst = [0, 2, 6, 7, 28, 29, 31, 32, 34, 35]; // none recorded yet: each request fetches
  const answers = await Promise.all(burst.map((n) => raw(node.rpcUrl, 'eth_getBlockByNumber', [hex(n), false])));
  for (const [i, n] of burst.entries()) assert.equal(answers[i], await raw(producer.rpcUrl, 'eth_getBlockByNumber', [hex(n), false]), `block ${n}`);
  assert.ok(proxy.peak <= 2, `at most 2 requests in flight at the source (saw ${proxy.peak})`);

  // The on-demand range maximum (20 here): -32005 query_too_expensive, before anything is fetched.
  const tooWide = JSON.parse(await raw(node.rpcUrl, 'eth_getLogs', [{ fromBlock: hex(0), toBlock: hex(25) }])) as { error: { code: number; data: { code: string; limit: number } } };
  assert.equal(tooWide.error.code, -32005);
  assert.equal(tooWide.error.data.code, 'query_too_expensive');
  assert.equal(tooWide.error.data.limit, 20);

  // A tampered block (receipts not matching its receipts root) is refused naming the block, and never served.
  proxy.tamperReceipts(37);
  for (const method of ['eth_getBlockReceipts', 'eth_getBlockByNumber']) {
    const refused = JSON.parse(await raw(node.rpcUrl, method, method === 'eth_getBlockReceipts' ? [hex(37)] : [hex(37), false])) as { error: { code: number; message: string; data: { code: string; block: number } } };
    assert.equal(refused.error.code, -32002, method);
    assert.equal(refused.error.data.code, 'source_unavailable');
    assert.equal(refused.error.data.block, 37);
    assert.match(refused.error.message, /block 37: verification failed: receiptsRoot mismatch/);
  }
  proxy.tamperReceipts(null);
  assert.equal(await raw(node.rpcUrl, 'eth_getBlockReceipts', [hex(37)]), await raw(producer.rpcUrl, 'eth_getBlockReceipts', [hex(37)]), 'the honest block once the source serves it');

  // The same over the WebSocket listener.
  const { WebSocket } = await import('ws');
  const socket = new WebSocket(node.wsUrl);
  await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject); });
  const answer = new Promise<string>((resolve) => socket.once('message', (data) => resolve(String(data))));
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_getBlockByNumber', params: [hex(1), true] }));
  assert.equal(await answer, await raw(producer.rpcUrl, 'eth_getBlockByNumber', [hex(1), true]));
  socket.close();
});
