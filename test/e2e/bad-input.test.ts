/**
 * Generated bad input against the real node (fast-check): JSON-RPC over HTTP and WebSocket, and the
 * aggregate API. Whatever is sent, every answer is in the right error shape, nothing answers 5xx or
 * -32603, no lane restarts, no request faults, and the node is still ready at the end.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import WebSocket from 'ws';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { PROJECT_ROOT } from '../support/paths.js';
import { startNatsServer } from '../support/nats-server.js';
import { relayJetstreamToml, startRelayProcess } from '../support/relay-process.js';

const RUNS = 1000;

/** Names that select a property of a plain object, served methods, known-unsupported ones and odd strings. */
const PROTOTYPE_NAMES = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', '__defineGetter__', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', 'prototype', 'then'];
const SERVED = ['eth_blockNumber', 'eth_chainId', 'eth_getBlockByNumber', 'eth_getBlockByHash', 'eth_getBlockReceipts', 'eth_getTransactionReceipt', 'eth_getTransactionByHash', 'eth_blobBaseFee', 'eth_syncing', 'eth_config', 'eth_getLogs', 'node_getCapabilities', 'net_version', 'web3_clientVersion', 'eth_subscribe', 'eth_unsubscribe', 'eth_getBalance', 'eth_call', 'eth_sendRawTransaction'];

const hexish = fc.oneof(
  fc.constantFrom('0x', '0x0', '0x00', '0x1', '0xffffffffffffffff', `0x${'f'.repeat(80)}`, '-0x1', '0xg', 'latest', 'earliest', 'pending', 'safe', 'finalized', 'LATEST', ''),
  fc.bigInt({ min: -(1n << 70n), max: 1n << 300n }).map((n) => (n < 0n ? `-0x${(-n).toString(16)}` : `0x${n.toString(16)}`)),
  fc.string({ maxLength: 70 }),
);
const param = fc.oneof(hexish, fc.jsonValue({ maxDepth: 3 }), fc.double(), fc.integer(), fc.boolean(),
  fc.record({ fromBlock: hexish, toBlock: hexish, address: fc.oneof(hexish, fc.array(hexish, { maxLength: 3 })), topics: fc.array(fc.oneof(hexish, fc.constant(null), fc.array(hexish, { maxLength: 2 })), { maxLength: 5 }), blockHash: hexish }, { requiredKeys: [] }));
const method = fc.oneof(fc.constantFrom(...PROTOTYPE_NAMES, ...SERVED), fc.string({ maxLength: 40 }), fc.jsonValue({ maxDepth: 1 }));
const id = fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.constant(null), fc.constant(undefined), fc.double(), fc.jsonValue({ maxDepth: 2 }));
const request = fc.record({
  jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('2.0'), fc.constant('1.0'), fc.constant(undefined), fc.jsonValue({ maxDepth: 1 })),
  id,
  method,
  params: fc.oneof(fc.array(param, { maxLength: 4 }), fc.constant(undefined), fc.jsonValue({ maxDepth: 2 })),
}, { requiredKeys: ['method'] });
const rpcBody = fc.oneof(
  request.map((r) => JSON.stringify(r)),
  request.map((r) => JSON.stringify(r)),
  fc.array(request, { minLength: 0, maxLength: 6 }).map((batch) => JSON.stringify(batch)),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 200 }),
);

interface RpcAnswer {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown };
}

function checkRpcAnswers(text: string, body: string): void {
  const parsed = JSON.parse(text) as RpcAnswer | RpcAnswer[];
  for (const answer of Array.isArray(parsed) ? parsed : [parsed]) {
    assert.equal(answer.jsonrpc, '2.0', `an answer to ${body}: ${text}`);
    if (answer.error === undefined) {
      assert.ok('result' in answer, `result or error: ${text}`);
      continue;
    }
    assert.ok(Number.isInteger(answer.error.code) && typeof answer.error.message === 'string', `error shape: ${text}`);
    assert.notEqual(answer.error.code, -32603, `no internal error for ${body}: ${text}`);
  }
}

async function rpcPost(node: NodeProcess, body: string): Promise<void> {
  const response = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await response.text();
  assert.ok(response.status < 500, `status ${response.status} for ${body}: ${text}`);
  if (response.status !== 200) {
    checkRpcAnswers(text, body);
    return;
  }
  if (text !== '') checkRpcAnswers(text, body);
}

/** One WebSocket on which a frame's answers are everything before the answer to a sentinel sent after it. */
async function openSocket(t: TestContext, url: string) {
  const socket = new WebSocket(url);
  t.after(() => socket.terminate());
  await new Promise<void>((resolve, reject) => socket.once('open', () => resolve()).once('error', reject));
  const inbox: string[] = [];
  let wake: (() => void) | null = null;
  let closed: string | null = null;
  socket.on('message', (data) => {
    inbox.push(String(data));
    wake?.();
  });
  socket.on('close', (code, reason) => {
    closed = `${code} ${String(reason)}`;
    wake?.();
  });
  let sentinel = 0;
  return async function exchange(frame: string): Promise<string[]> {
    sentinel += 1;
    const mark = `sentinel-${sentinel}`;
    socket.send(frame);
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: mark, method: 'eth_chainId', params: [] }));
    const answers: string[] = [];
    for (;;) {
      while (inbox.length > 0) {
        const message = inbox.shift()!;
        if (message.includes(`"id":"${mark}"`)) return answers;
        if ((JSON.parse(message) as RpcAnswer).method !== 'eth_subscription') answers.push(message);
      }
      if (closed !== null) throw new Error(`the server closed the WebSocket (${closed}) after ${frame}`);
      await new Promise<void>((resolve) => { wake = resolve; });
      wake = null;
    }
  };
}

const SEGMENTS = ['v1', 'processors', 'blobs', 'q', 'collections', 'blocks', 'transactions', 'entities', 'changes', 'stream', 'consumers', 'head', 'status',
  'schema', 'snapshot', 'schedule', 'query-and-follow', 'query-snapshots', 'checkpoints', 'savepoints', 'capabilities', 'lease', 'ack', 'admin', 'metrics', 'health',
  'ready', 'live', 'network', 'debug', 'query', 'erc20', 'amm', 'balances', 'pools', 'restore', 'openapi.json', 'materialization-jobs', 'backfill-subscriptions', 'sources', 'probe', 'cancel', 'devnet', 'rebuild', 'rebuilds', 'promote', 'rollback', 'artifacts', 'export', 'replay', 'pins', ...PROTOTYPE_NAMES, '..', '.', '%00', '%zz', '%2F', '0x00', '1', '-1', '99999999999999999999'];
const address = fc.oneof(fc.uint8Array({ minLength: 20, maxLength: 20 }).map((bytes) => `0x${Buffer.from(bytes).toString('hex')}`), fc.constantFrom('0x', '0xZZ', `0x${'0'.repeat(40)}`, `0X${'A'.repeat(40)}`));
// Identifiers past any key length: LMDB refused those with an exception (a 500), not a miss.
const longSegment = fc.integer({ min: 400, max: 5000 }).map((length) => 'p'.repeat(length));
const segment = fc.oneof(fc.constantFrom(...SEGMENTS), fc.string({ maxLength: 12 }).map(encodeURIComponent), address, longSegment);
const path = fc.oneof(
  fc.array(segment, { minLength: 1, maxLength: 7 }).map((parts) => `/${parts.join('/')}`),
  fc.tuple(fc.constantFrom('/v1/processors/blobs/', '/v1/q/blobs/', '/v1/processors/blobs/collections/blocks/', '/v1/q/erc20/balances/', '/v1/q/amm/pools/',
    '/v1/processors/erc20/', '/v1/processors/erc20/checkpoints/', '/v1/processors/amm/collections/', '/v1/network/', '/debug/',
    '/admin/v1/materialization-jobs/', '/admin/v1/backfill-subscriptions/', '/admin/v1/sources/', '/admin/v1/sources/devnet/', '/admin/v1/processors/', '/admin/v1/processors/blobs/',
    // Artifact routes (the example configuration retains erc20's; blobs keeps none).
    '/v1/processors/erc20/artifacts/', '/v1/processors/blobs/artifacts/', '/admin/v1/processors/erc20/artifacts', '/admin/v1/processors/erc20/artifacts/', '/admin/v1/processors/blobs/artifacts/'), fc.array(segment, { maxLength: 3 })).map(([prefix, parts]) => prefix + parts.join('/')),
);
const QUERY_KEYS = ['fromBlock', 'toBlock', 'limit', 'cursor', 'after', 'allowPartial', 'blockNumber', 'atBlock', 'fromTimestamp', 'toTimestamp', 'ownerKind', 'ownerId', ...PROTOTYPE_NAMES];
const queryValue = fc.oneof(hexish, fc.constantFrom('1', '0', '-1', '1e309', 'NaN', 'Infinity', '1.5', 'true', 'AAAA', '9007199254740993'), fc.base64String({ maxLength: 80 }), fc.string({ maxLength: 30 }));
const query = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_KEYS), fc.string({ maxLength: 8 })), queryValue), { maxLength: 4 })
  .map((pairs) => (pairs.length === 0 ? '' : `?${new URLSearchParams(pairs).toString()}`));
const headerValue = fc.string({ maxLength: 60 }).filter((value) => /^[\x20-\x7e]*$/.test(value));
const apiRequest = fc.record({
  method: fc.constantFrom('GET', 'GET', 'GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'),
  path,
  query,
  body: fc.oneof(fc.constant(undefined), fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)), fc.string({ maxLength: 100 }),
    // Near-valid materialization-job bodies (POST /admin/v1/materialization-jobs).
    fc.record({
      processor: fc.oneof(fc.constantFrom('blobs', 'erc20', 'amm', ...PROTOTYPE_NAMES), fc.string({ maxLength: 10 })),
      fromBlock: fc.oneof(fc.integer({ min: -2, max: 1_000_000 }), fc.double(), hexish), toBlock: fc.oneof(fc.integer({ min: -2, max: 1_000_000 }), fc.double(), hexish),
      mode: fc.constantFrom('fill_missing', 'recompute', 'constructor'), idempotencyKey: fc.string({ maxLength: 20 }), source: fc.constantFrom('devnet', 'nope', 'constructor'),
      // Near-valid backfill-subscription consumers (POST /admin/v1/backfill-subscriptions).
      consumer: fc.oneof(fc.constant(null), fc.string({ maxLength: 10 }), fc.record({
        id: fc.oneof(fc.constantFrom('c1', ...PROTOTYPE_NAMES), fc.string({ maxLength: 10 })), role: fc.constantFrom('required', 'best_effort', 'constructor'),
        leaseTtlSeconds: fc.oneof(fc.integer({ min: -1, max: 700_000 }), fc.double()), credential: fc.string({ maxLength: 24 }),
      }, { requiredKeys: [] })),
    }, { requiredKeys: [] }).map((value) => JSON.stringify(value)),
    // Near-valid artifact replay and pin bodies (POST /admin/v1/processors/{p}/artifacts/replay, …/pins).
    fc.record({
      targetProcessor: fc.oneof(fc.constantFrom('erc20', 'blobs', 'amm', ...PROTOTYPE_NAMES), fc.string({ maxLength: 10 })),
      ownerId: fc.oneof(fc.constantFrom('pin-1', ...PROTOTYPE_NAMES), fc.string({ maxLength: 10 })),
      fromBlock: fc.oneof(fc.integer({ min: -2, max: 1_000_000 }), fc.double(), hexish), toBlock: fc.oneof(fc.integer({ min: -2, max: 1_000_000 }), fc.double(), hexish),
      limit: fc.oneof(fc.integer({ min: -1, max: 100_000_000 }), fc.double(), fc.string({ maxLength: 4 })),
    }, { requiredKeys: [] }).map((value) => JSON.stringify(value))),
  contentType: fc.constantFrom(undefined, 'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-8'),
  authorization: fc.option(fc.oneof(headerValue, headerValue.map((v) => `Bearer ${v}`)), { nil: undefined }),
  lastEventId: fc.option(headerValue, { nil: undefined }),
  credential: fc.option(headerValue, { nil: undefined }),
});

type ApiRequest = typeof apiRequest extends fc.Arbitrary<infer T> ? T : never;

async function apiCall(node: Pick<NodeProcess, 'baseUrl'>, input: ApiRequest): Promise<void> {
  const headers: Record<string, string> = {};
  if (input.contentType) headers['content-type'] = input.contentType;
  if (input.authorization) headers.authorization = input.authorization;
  if (input.lastEventId) headers['last-event-id'] = input.lastEventId;
  if (input.credential) headers['x-node-consumer-credential'] = input.credential;
  const hasBody = input.body !== undefined && input.method !== 'GET';
  const aborter = new AbortController();
  const response = await fetch(`${node.baseUrl}${input.path}${input.query}`, { method: input.method, headers, body: hasBody ? input.body : undefined, signal: aborter.signal });
  const described = `${input.method} ${input.path}${input.query} ${JSON.stringify(headers)} ${hasBody ? input.body : ''}`;
  assert.ok(response.status < 500, `status ${response.status} for ${described}`);
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    aborter.abort();
    return;
  }
  const text = await response.text();
  if (response.status < 400) return;
  const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; retryable?: unknown; requestId?: unknown } };
  const error = body.error;
  assert.ok(error && typeof error.code === 'string' && typeof error.message === 'string' && typeof error.retryable === 'boolean' && typeof error.requestId === 'string',
    `the spec's error shape for ${described}: ${text}`);
  assert.equal(response.headers.get('x-request-id'), error.requestId);
}

async function metricsText(node: Pick<NodeProcess, 'baseUrl'>): Promise<string> {
  return (await fetch(`${node.baseUrl}/metrics`)).text();
}

function sumOf(text: string, name: string): number {
  let sum = 0;
  for (const match of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(match[1]);
  return sum;
}

test('generated bad input: JSON-RPC over HTTP and WebSocket and the aggregate API answer in their error shapes, with no 5xx, no lane restart and the node still ready', async (t) => {
  // The example configuration: every built-in kind (blobs, erc20, amm) and its typed routes are served.
  const node = await startNodeProcess({ toml: readFileSync(join(PROJECT_ROOT, 'config.example.toml'), 'utf8') });
  t.after(async () => {
    await node.stop('SIGKILL');
    removeDir(node.dir);
  });
  const started = performance.now();
  const lap = (() => {
    let last = started;
    return () => {
      const now = performance.now();
      const seconds = ((now - last) / 1000).toFixed(1);
      last = now;
      return seconds;
    };
  })();
  await fc.assert(fc.asyncProperty(rpcBody, (body) => rpcPost(node, body)), { numRuns: RUNS });
  const httpSeconds = lap();
  const exchange = await openSocket(t, node.wsUrl);
  await fc.assert(fc.asyncProperty(rpcBody, async (frame) => {
    for (const answer of await exchange(frame)) checkRpcAnswers(answer, frame);
  }), { numRuns: RUNS });
  const wsSeconds = lap();
  await fc.assert(fc.asyncProperty(apiRequest, (input) => apiCall(node, input)), { numRuns: RUNS });
  const apiSeconds = lap();
  t.diagnostic(`${3 * RUNS} generated cases in ${((performance.now() - started) / 1000).toFixed(1)} s: ${RUNS} JSON-RPC HTTP bodies (${httpSeconds} s), ${RUNS} WebSocket frames (${wsSeconds} s), ${RUNS} aggregate requests (${apiSeconds} s)`);

  const metrics = await metricsText(node);
  assert.equal(sumOf(metrics, 'chain_node_lane_restarts_total'), 0, 'no lane restarted');
  assert.equal(sumOf(metrics, 'chain_node_request_faults_total'), 0, 'no request failed inside the node');
  const ready = await fetch(`${node.baseUrl}/health/ready`);
  assert.equal(ready.status, 200, await ready.text());
  // Nothing committed was damaged: the stopped store verifies clean.
  assert.equal(await node.stop('SIGTERM'), 0);
  const verify = await runCli(['db', 'verify', '--data-dir', node.dataDir]);
  assert.equal(verify.code, 0, `db verify after the generated input:\n${verify.stdout}${verify.stderr}`);
});

/** Requests aimed at a relay's routes: its delivery routes under the published processors, and anything else. */
const RELAY_PREFIXES = ['/v1/processors/blobs/', '/v1/processors/erc20/', '/v1/processors/amm/', '/v1/processors/erc20/consumers/', '/v1/processors/blobs/consumers/c1/', '/v1/processors/nope/', '/'];
const relayRequest = fc.tuple(apiRequest, fc.option(fc.tuple(fc.constantFrom(...RELAY_PREFIXES), fc.array(segment, { maxLength: 3 })), { nil: undefined }))
  .map(([input, aimed]) => (aimed ? { ...input, path: aimed[0] + aimed[1].join('/') } : input));

test('generated bad input against a relay (chain-node relay over JetStream): every answer in the error shape, no 5xx, no request fault, the relay still ready', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const jetstream = `[delivery.jetstream]\nenabled = true\nservers = ["${server.url}"]\n`;
  const node = await startNodeProcess({ toml: `${readFileSync(join(PROJECT_ROOT, 'config.example.toml'), 'utf8').replace(/^\[delivery\.jetstream\][\s\S]*?(?=^\[chain\])/m, '')}\n${jetstream}`, sets: ['devnet.block_time_ms=200'] });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  const relay = await startRelayProcess({ dir: node.dir, toml: relayJetstreamToml([server.url], 'CHAIN_NODE_CHANGES', 'chain-node.changes') });
  t.after(() => relay.stop('SIGKILL'));
  await fc.assert(fc.asyncProperty(relayRequest, (input) => apiCall(relay, input)), { numRuns: RUNS });
  const metrics = await metricsText(relay);
  assert.equal(sumOf(metrics, 'chain_node_request_faults_total'), 0, 'no request failed inside the relay');
  assert.equal((await fetch(`${relay.baseUrl}/health/ready`)).status, 200);
});
