/**
 * The node behind Debian's nginx with the README's settings (ops/nginx-chain-node.conf): aggregate
 * routes, an SSE stream (eventsource), JSON-RPC over HTTP (viem) and over WebSocket (ws, with a
 * newHeads subscription) all work through it. `.ci/run` installs nginx when it is missing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createPublicClient, http } from 'viem';
import { PROJECT_ROOT } from '../support/paths.js';
import { freePort } from '../support/ports.js';
import { statusLineOf } from '../support/raw-http.js';
import { removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';
import { NGINX, startNginx } from '../support/nginx.js';
import { changeSequences, recordEventSource } from '../api/sse/sse-clients.js';

const FAST = ['devnet.block_time_ms=300', 'sse.heartbeat_seconds=1'];

/** The README's server block with the node's ports, inside a minimal nginx main configuration of its own. */
function nginxConfig(dir: string, listen: number, ports: { api: number; rpc: number; ws: number }): string {
  const server = readFileSync(join(PROJECT_ROOT, 'ops', 'nginx-chain-node.conf'), 'utf8')
    .replace('127.0.0.1:8443', `127.0.0.1:${listen}`)
    .replace('127.0.0.1:8080', `127.0.0.1:${ports.api}`)
    .replace('127.0.0.1:8545', `127.0.0.1:${ports.rpc}`)
    .replace('127.0.0.1:8546', `127.0.0.1:${ports.ws}`);
  for (const temp of ['client', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, temp), { recursive: true });
  return [
    'daemon off;', 'master_process off;', 'worker_processes 1;', `pid ${join(dir, 'nginx.pid')};`, `error_log ${join(dir, 'error.log')} warn;`,
    'events { worker_connections 256; }',
    'http {', '  access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind, i) => `  ${kind}_temp_path ${join(dir, ['client', 'proxy', 'fastcgi', 'uwsgi', 'scgi'][i]!)};`),
    server, '}',
  ].join('\n');
}

const portOf = (url: string) => Number(new URL(url).port);

test('behind nginx with the README settings: aggregate routes, an SSE stream, JSON-RPC over HTTP and over WebSocket', { skip: NGINX ? false : 'nginx is not installed (apt-get install nginx-light; .ci/run installs it)' }, async (t) => {
  const node = await startNodeProcess({ sets: FAST });
  t.after(async () => {
    await node.stop('SIGKILL');
    removeDir(node.dir);
  });
  const listen = await freePort();
  const nginxDir = join(node.dir, 'nginx');
  mkdirSync(nginxDir, { recursive: true });
  const nginx = startNginx(t, nginxDir, nginxConfig(nginxDir, listen, { api: portOf(node.baseUrl), rpc: portOf(node.rpcUrl), ws: portOf(node.wsUrl) }));
  const proxy = `http://127.0.0.1:${listen}`;
  await waitUntil(node, async () => {
    nginx.checkAlive();
    return (await fetch(`${proxy}/health/ready`)).status === 200;
  }, 30_000).catch((error: unknown) => {
    throw new Error(`${String(error)}\nnginx: ${nginx.errors()}`);
  });

  // Requests the node's own HTTP server drops without an answer get one through the proxy.
  const manyHeaders = Array.from({ length: 100 }, (_, i) => `X-H${i}: v\r\n`).join('');
  const odd: Array<[string, RegExp]> = [
    ['GET /v1/status HTTP/1.0\r\n\r\n', /^HTTP\/1\.1 200 /],
    ['GET /v1/status HTTP/1.0\r\nHost: x\r\n\r\n', /^HTTP\/1\.1 200 /],
    ['FOO /v1/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', /^HTTP\/1\.1 405 /],
    ['GET /v1/status HTTP/1.1\r\nConnection: close\r\n\r\n', /^HTTP\/1\.1 400 /],
    [`GET /v1/status HTTP/1.1\r\nHost: x\r\n${manyHeaders}Connection: close\r\n\r\n`, /^HTTP\/1\.1 200 /],
    [`GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100 * 1024)}\r\nConnection: close\r\n\r\n`, /^HTTP\/1\.1 4\d\d /],
  ];
  for (const [request, expected] of odd) assert.match(await statusLineOf(listen, request), expected, request.slice(0, 60));

  const status = await fetch(`${proxy}/v1/status`);
  assert.equal(status.status, 200);
  assert.equal(((await status.json()) as { chainId: number }).chainId, 1337);
  const missing = await fetch(`${proxy}/v1/processors/nope/status`);
  assert.equal(missing.status, 404);
  assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'not_found');

  // SSE: hello, then live changes pass through one by one (no buffering until the stream ends).
  const stream = recordEventSource(t, `${proxy}/v1/processors/blobs/stream`);
  await stream.waitFor((events) => events.some((e) => e.type === 'hello'), 30_000);
  await stream.waitFor((events) => changeSequences(events).length >= 3, 60_000);

  // JSON-RPC over HTTP through /rpc, with viem.
  const client = createPublicClient({ transport: http(`${proxy}/rpc`) });
  assert.equal(await client.getChainId(), 1337);
  await waitUntil(node, async () => (await client.getBlockNumber({ cacheTime: 0 })) >= 2n, 60_000);
  const block = await client.getBlock({ blockTag: 'latest' });
  assert.ok(block.number >= 2n);
  assert.equal((await client.getBlock({ blockNumber: 1n })).number, 1n);

  // JSON-RPC over WebSocket through /ws: a call and a newHeads subscription.
  const socket = new WebSocket(`ws://127.0.0.1:${listen}/ws`);
  t.after(() => socket.terminate());
  const messages: { id?: number; result?: unknown; method?: string; params?: { result: { number: string } } }[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as (typeof messages)[number]));
  await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }));
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['newHeads'] }));
  await waitUntil(node, async () => messages.filter((m) => m.method === 'eth_subscription').length >= 2, 60_000);
  assert.equal(messages.find((m) => m.id === 1)?.result, '0x539');
  assert.match(String(messages.find((m) => m.id === 2)?.result), /^0x[0-9a-f]{32}$/);
});
