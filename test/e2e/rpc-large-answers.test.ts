/**
 * Large JSON-RPC answers over HTTP (a ~200-transaction block with full transactions, its receipts):
 * the listener streams them from the cached bytes with tryEnd/onWritable, so this checks that what
 * arrives is exactly the answer the WebSocket listener gives (one joined buffer), that viem reads it,
 * that a client which stops reading while many answers queue up still gets every byte in order once it
 * reads again, and that a client leaving in the middle of an answer leaves the listener serving.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { createPublicClient, http } from 'viem';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

let node: NodeProcess;
const BLOCK = '0x1';
const fullBlock = `{"jsonrpc":"2.0","id":7,"method":"eth_getBlockByNumber","params":["${BLOCK}",true]}`;
const receipts = `{"jsonrpc":"2.0","id":"r","method":"eth_getBlockReceipts","params":["${BLOCK}"]}`;

async function post(body: string): Promise<Buffer> {
  const response = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  assert.equal(response.status, 200);
  return Buffer.from(await response.arrayBuffer());
}

function overWebSocket(body: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(node.wsUrl);
    socket.on('open', () => socket.send(body));
    socket.on('message', (data: Buffer) => {
      resolve(data);
      socket.close();
    });
    socket.on('error', reject);
  });
}

/** Reads HTTP/1.1 responses with content-length bodies off `socket` until `count` are complete. */
function readResponses(socket: Socket, count: number): Promise<Array<{ status: number; body: Buffer }>> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const responses: Array<{ status: number; body: Buffer }> = [];
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const headerEnd = buffered.indexOf('\r\n\r\n');
        if (headerEnd < 0) return;
        const head = buffered.subarray(0, headerEnd).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1]);
        assert.ok(Number.isInteger(length), `a content-length header: ${head}`);
        if (buffered.length < headerEnd + 4 + length) return;
        responses.push({ status: Number(head.split(' ')[1]), body: buffered.subarray(headerEnd + 4, headerEnd + 4 + length) });
        buffered = buffered.subarray(headerEnd + 4 + length);
        if (responses.length === count) resolve(responses);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`closed after ${responses.length} of ${count} responses`)));
  });
}

function rawRequest(body: string): string {
  return `POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** The rpc listener's `chain_node_rpc_requests_total{transport="http"}`: HTTP bodies answered so far. */
async function httpAnswered(): Promise<number> {
  const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
  return Number(/^chain_node_rpc_requests_total\{transport="http"[^}]*\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

function open(): Promise<Socket> {
  const url = new URL(node.rpcUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

before(async () => {
  node = await startNodeProcess({ sets: ['devnet.block_time_ms=1000', 'devnet.reorg_every=0', 'devnet.transactions_per_block=200', 'log.level=warn'] });
  await waitUntil(node, async () => !(await post(fullBlock)).includes('"result":null'), 60_000);
});

after(async () => {
  await node.stop();
  removeDir(node.dir);
});

test('a full block of 200+ transactions and its receipts arrive over HTTP byte for byte as over WebSocket, and viem reads the block', async () => {
  for (const body of [fullBlock, receipts]) {
    const [viaHttp, viaWs] = await Promise.all([post(body), overWebSocket(body)]);
    assert.ok(viaHttp.length > 64 * 1024, `a large answer (${viaHttp.length} bytes)`);
    assert.ok(viaHttp.equals(viaWs), 'the HTTP answer is byte-identical to the WebSocket one');
    const parsed = JSON.parse(viaHttp.toString('utf8')) as { id: unknown; result: unknown };
    assert.equal(parsed.id, JSON.parse(body).id);
    assert.ok(Array.isArray(body === receipts ? parsed.result : (parsed.result as { transactions: unknown[] }).transactions));
  }
  const client = createPublicClient({ transport: http(node.rpcUrl, { timeout: 30_000 }) });
  const block = await client.getBlock({ blockNumber: 1n, includeTransactions: true });
  assert.ok(block.transactions.length >= 200, `${block.transactions.length} transactions`);
  assert.ok(block.transactions.every((tx) => tx.blockNumber === 1n && tx.blockHash === block.hash));
});

test('a client that stops reading while 40 large answers queue up gets every one, complete and in order, once it reads', async () => {
  // Two different answers, alternating: an answer's bytes must not be overwritten by the next one's.
  const bodies = [fullBlock, receipts];
  const expected = await Promise.all(bodies.map(post));
  const socket = await open();
  try {
    const count = 40;
    const answeredBefore = await httpAnswered();
    socket.pause();
    const done = readResponses(socket, count);
    socket.write(Array.from({ length: count }, (_, i) => rawRequest(bodies[i % 2]!)).join(''));
    // Megabytes of answers against loopback socket buffers: the listener meets backpressure and
    // queues them. Wait until it has answered all of them while the client reads nothing.
    await waitUntil(node, async () => (await httpAnswered()) >= answeredBefore + count, 60_000);
    socket.resume();
    const responses = await done;
    for (const [i, response] of responses.entries()) {
      assert.equal(response.status, 200, `answer ${i}`);
      assert.ok(response.body.equals(expected[i % 2]!), `answer ${i} is complete and unchanged`);
    }
  } finally {
    socket.destroy();
  }
});

test('a client leaving in the middle of large answers does not disturb the listener', async () => {
  const expected = await post(receipts);
  for (let i = 0; i < 5; i += 1) {
    const socket = await open();
    socket.write(Array.from({ length: 10 }, () => rawRequest(receipts)).join(''));
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.destroy();
  }
  assert.ok((await post(receipts)).equals(expected));
  assert.ok((await overWebSocket(receipts)).equals(expected));
});
