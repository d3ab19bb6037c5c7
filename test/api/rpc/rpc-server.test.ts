/**
 * The JSON-RPC listeners' edges, through real sockets (fetch, `ws`, raw TCP): method names that are
 * Object.prototype properties, the request boundary (a handler that throws is answered -32603 with a
 * request id and counted, and the listener keeps serving), content types, notifications, the
 * WebSocket's frame limits and a plain GET on the WebSocket port.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import WebSocket from 'ws';
import type uWS from 'uWebSockets.js';
import { closeApp, closeListenSocket, listen } from '../../../api/server.js';
import { createRpcServers, type RpcServers } from '../../../api/rpc/rpc-server.js';
import type { RpcContext } from '../../../api/rpc/rpc-context.js';
import { createLogger } from '../../../runtime/log.js';
import { devnetStore, type DevnetStore } from './devnet-store.js';
import { createRpcMetrics } from '../../../actors/rpc/metrics.js';

const PROTOTYPE_NAMES = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', 'isPrototypeOf', 'toLocaleString'];
const MAX_BODY = 64 * 1024;

interface Answer { id?: unknown; result?: unknown; error?: { code: number; message: string; data?: { code?: string; requestId?: string } } }

let d: DevnetStore;
let servers: RpcServers;
let metrics: Registry;
let sockets: uWS.us_listen_socket[] = [];
let httpUrl: string;
let wsUrl: string;
let wsPort: number;
/** When set, the served chain throws this (a bug inside the node, as far as the listener can tell). */
let fault: Error | null = null;
const logged: string[] = [];

before(async () => {
  d = await devnetStore({ seed: 'rpc-server', reorgEvery: 0 }, 6);
  const chain = new Proxy(d.context.chain, {
    get(target, property, receiver) {
      if (property === 'head' && fault) throw fault;
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const context: RpcContext = { ...d.context, chain };
  metrics = new Registry();
  const log = createLogger({ lane: 'rpc', level: 'error', maxLinesPerSecond: 1000, destination: { write: (line: string) => logged.push(line) } });
  servers = createRpcServers({ context, maxBodyBytes: MAX_BODY, wsMaxBufferedBytes: 1 << 20, maxSubscriptionsPerConnection: 10, log, metrics: createRpcMetrics(metrics) });
  const http = await listen(servers.http, '127.0.0.1:0', { name: 'rpc_http', allow: ['POST'] });
  const ws = await listen(servers.ws, '127.0.0.1:0', { name: 'rpc_ws', allow: ['GET'] });
  sockets = [http.socket, ws.socket];
  httpUrl = `http://127.0.0.1:${http.port}`;
  wsUrl = `ws://127.0.0.1:${ws.port}`;
  wsPort = ws.port;
});

after(async () => {
  for (const socket of sockets) closeListenSocket(socket);
  servers?.hub.close();
  if (servers) {
    closeApp(servers.http);
    closeApp(servers.ws);
  }
  await d?.close();
});

async function post(body: string, contentType = 'application/json'): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(httpUrl, { method: 'POST', headers: { 'content-type': contentType }, body });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

async function faults(listener: string): Promise<number> {
  const text = await metrics.metrics();
  return Number(new RegExp(`^chain_node_request_faults_total\\{listener="${listener}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
}

async function openSocket(): Promise<{ socket: WebSocket; next: () => Promise<Answer>; closed: Promise<{ code: number; reason: string }> }> {
  const socket = new WebSocket(wsUrl);
  const inbox: Answer[] = [];
  const waiting: ((answer: Answer) => void)[] = [];
  socket.on('message', (data) => {
    const answer = JSON.parse(String(data)) as Answer;
    const waiter = waiting.shift();
    if (waiter) waiter(answer);
    else inbox.push(answer);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
  await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
  return { socket, closed, next: () => (inbox.length > 0 ? Promise.resolve(inbox.shift()!) : new Promise((resolve) => waiting.push(resolve))) };
}

const call = (method: unknown, id: unknown = 1, params: unknown[] = []) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

describe('JSON-RPC listeners', () => {
  it('answers every Object.prototype name as an unknown method (-32601), over HTTP, over WebSocket and per request inside a batch', async () => {
    for (const name of PROTOTYPE_NAMES) {
      const { status, text } = await post(call(name));
      assert.equal(status, 200);
      const answer = JSON.parse(text) as Answer;
      assert.equal(answer.error?.code, -32601, `${name}: ${text}`);
    }
    const batch = JSON.parse((await post(`[${call('constructor', 1)},${call('eth_blockNumber', 2)},${call('__proto__', 3)},${call('eth_getBalance', 4, ['0x0000000000000000000000000000000000000000', 'latest'])}]`)).text) as Answer[];
    assert.deepEqual(batch.map((a) => a.error?.code ?? 'result'), [-32601, 'result', -32601, -32004]);
    const ws = await openSocket();
    for (const name of PROTOTYPE_NAMES) {
      ws.socket.send(call(name, name));
      const answer = await ws.next();
      assert.equal(answer.id, name);
      assert.equal(answer.error?.code, -32601);
    }
    ws.socket.close();
    assert.equal(await faults('rpc_http'), 0);
  });

  it('answers a request whose handling throws inside the node with -32603 and a request id (no internal text), logs and counts it, and keeps serving', async () => {
    const before = await faults('rpc_http');
    fault = new TypeError('an internal detail that must stay in the log');
    try {
      const { status, text } = await post(call('eth_blockNumber', 7));
      assert.equal(status, 200);
      const answer = JSON.parse(text) as Answer;
      assert.equal(answer.id, 7);
      assert.equal(answer.error?.code, -32603);
      assert.equal(answer.error?.data?.code, 'internal');
      assert.doesNotMatch(text, /internal detail/);
      const requestId = answer.error!.data!.requestId!;
      assert.match(requestId, /^[0-9a-f-]{36}$/);
      assert.ok(logged.some((line) => line.includes(requestId) && line.includes('internal detail')), 'the details are logged under the request id');
      const ws = await openSocket();
      ws.socket.send(call('eth_blockNumber', 8));
      assert.equal((await ws.next()).error?.code, -32603);
      ws.socket.close();
    } finally {
      fault = null;
    }
    assert.equal(await faults('rpc_http'), before + 1);
    assert.equal(await faults('rpc_ws'), 1);
    assert.equal((JSON.parse((await post(call('eth_blockNumber'))).text) as Answer).result, '0x6');
  });

  it('refuses a body not declared as JSON with 415, and answers a notification with an empty body of length 0 at once', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', '']) {
      const { status, text } = await post(call('eth_blockNumber'), type);
      assert.equal(status, 415, type);
      assert.equal((JSON.parse(text) as Answer).error?.code, -32600);
    }
    assert.equal((await post(call('eth_blockNumber'), 'application/json; charset=utf-8')).status, 200);
    const notification = await post(JSON.stringify({ jsonrpc: '2.0', method: 'eth_blockNumber' }));
    assert.equal(notification.status, 200);
    assert.equal(notification.text, '');
    assert.equal(notification.headers.get('content-length'), '0');
  });

  it('closes a WebSocket frame over the limit with 1009 and a binary frame that is not UTF-8 with 1007', async () => {
    const big = await openSocket();
    big.socket.send(call('eth_blockNumber', 'x'.repeat(MAX_BODY)));
    assert.equal((await big.closed).code, 1009);
    const binary = await openSocket();
    binary.socket.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: true });
    assert.equal((await binary.closed).code, 1007);
    const fine = await openSocket();
    fine.socket.send(Buffer.from(call('eth_chainId', 1)), { binary: true });
    assert.equal((await fine.next()).result, '0x539');
    fine.socket.close();
  });

  it('answers a plain GET and an upgrade without its key on the WebSocket port with 400', async () => {
    for (const head of [`GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, `GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade, close\r\n\r\n`]) {
      const text = await new Promise<string>((resolve, reject) => {
        const socket = connect(wsPort, '127.0.0.1');
        let received = '';
        socket.on('data', (chunk) => { received += String(chunk); });
        socket.once('close', () => resolve(received));
        socket.once('error', reject);
        socket.write(head);
      });
      assert.match(text, /^HTTP\/1\.1 400 /, text);
    }
  });
});
