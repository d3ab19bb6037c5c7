import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { consumerApi, createNodeClient, followConsumer, NodeHttpError, type ChangeEnvelope, type ConsumerBatch, type FollowOutcome } from '../../../api/client/index.js';

const SECRET = 'consumer-secret-0123456789';
const noSleep = async () => undefined;

interface Seen { method: string; url: string; body: string; credential: string | undefined }
type Handler = (seen: Seen, response: ServerResponse, calls: Seen[]) => void;

/** A real HTTP server standing in for the node's consumer routes; records every request. */
async function scriptedNode(t: { after(fn: () => unknown): void }, handler: Handler): Promise<{ base: string; calls: Seen[] }> {
  const calls: Seen[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    request.on('end', () => {
      const seen = { method: request.method ?? '', url: request.url ?? '', body, credential: request.headers['x-node-consumer-credential'] as string | undefined };
      calls.push(seen);
      handler(seen, response, calls);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

function view(acknowledged = 0, delivered = acknowledged, instance = 'erc20') {
  return { id: 'sink', processor: 'erc20', instance, role: 'required', leaseTtlSeconds: 60, lease: { expiresAt: '', active: true }, delivered: { sequence: String(delivered), cursor: `c${delivered}` }, acknowledged: { sequence: String(acknowledged), cursor: `c${acknowledged}` } };
}

function change(sequence: number, operation = 'apply'): ChangeEnvelope {
  return { sequence: String(sequence), cursor: `c${sequence}`, operation, kind: 'erc20.balance.put', key: 'aa', block: null, finality: 'included', data: {} } as ChangeEnvelope;
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function error(response: ServerResponse, status: number, code: string, details?: Record<string, unknown>): void {
  json(response, status, { error: { code, message: `${code} here`, retryable: status >= 500, requestId: 'r', ...(details ? { details } : {}) } });
}

async function drain(batches: AsyncGenerator<ConsumerBatch, FollowOutcome>): Promise<{ sequences: string[][]; outcome: FollowOutcome }> {
  const sequences: string[][] = [];
  for (;;) {
    const next = await batches.next();
    if (next.done) return { sequences, outcome: next.value };
    sequences.push(next.value.data.map((c) => c.sequence));
  }
}

test('a missing consumer is created at the application\'s position; failures start a new session with redelivery; a 410 stops with reset_required', async (t) => {
  let changes = 0;
  const { base, calls } = await scriptedNode(t, (seen, response) => {
    if (seen.url.endsWith('/lease')) {
      if (calls.filter((c) => c.url.endsWith('/lease')).length === 1) return error(response, 404, 'not_found');
      return json(response, 200, view(2, 2));
    }
    if (seen.method === 'POST' && seen.url === '/v1/processors/erc20/consumers') return json(response, 201, view(0));
    if (seen.url.startsWith('/v1/processors/erc20/consumers/sink/changes')) {
      changes += 1;
      if (changes === 1) return json(response, 200, { data: [change(1), change(2)], nextCursor: null, consumer: view(0, 2) });
      if (changes === 2) return error(response, 503, 'not_ready');
      if (changes === 3) return response.socket?.destroy();
      if (changes === 4) return json(response, 200, { data: [change(3)], nextCursor: null, consumer: view(2, 3) });
      return error(response, 410, 'cursor_expired');
    }
    error(response, 500, 'internal');
  });
  const api = consumerApi(createNodeClient({ baseUrl: base }), 'erc20', { id: 'sink', credential: SECRET, role: 'required', leaseTtlSeconds: 60 });
  const reconnects: string[] = [];
  const { sequences, outcome } = await drain(followConsumer({ api, limit: 50, start: () => ({ position: 'cursor', cursor: 'c0' }), sleep: noSleep, onReconnect: (info) => reconnects.push(info.reason) }));
  assert.deepEqual(sequences, [['1', '2'], ['3']]);
  assert.equal(outcome.kind, 'reset_required');
  assert.ok(outcome.kind === 'reset_required' && /cursor_expired/.test(outcome.reason) && outcome.lastCursor === 'c3');
  assert.equal(reconnects.length, 2);
  assert.match(reconnects[0]!, /503/);
  const creation = JSON.parse(calls.find((c) => c.url === '/v1/processors/erc20/consumers')!.body) as Record<string, unknown>;
  assert.deepEqual(creation, { id: 'sink', role: 'required', start: { position: 'cursor', cursor: 'c0' }, leaseTtlSeconds: 60, credential: SECRET });
  const leases = calls.filter((c) => c.url.endsWith('/lease'));
  assert.equal(leases.length, 3, 'every session opens with a lease');
  for (const lease of leases) assert.deepEqual(JSON.parse(lease.body), { redeliver: true });
  assert.ok(calls.filter((c) => c.url.includes('/consumers/sink')).every((c) => c.credential === SECRET), 'consumer-scoped calls carry the credential');
  assert.ok(calls.filter((c) => c.url.includes('/changes?')).every((c) => c.url.endsWith('limit=50')));
});

test('a consumer the application refuses (acknowledged past its position) is deleted and created again at its position', async (t) => {
  let created = false;
  const { base, calls } = await scriptedNode(t, (seen, response) => {
    if (seen.url.endsWith('/lease')) return json(response, 200, view(created ? 5 : 9));
    if (seen.method === 'DELETE') return response.writeHead(204).end();
    if (seen.method === 'POST' && seen.url === '/v1/processors/erc20/consumers') {
      created = true;
      return json(response, 201, view(5));
    }
    if (seen.url.includes('/changes?')) return json(response, 200, { data: [change(6, 'reset_required')], nextCursor: null, consumer: view(5, 6) });
    error(response, 500, 'internal');
  });
  const api = consumerApi(createNodeClient({ baseUrl: base }), 'erc20', { id: 'sink', credential: SECRET, role: 'required', leaseTtlSeconds: 60 });
  const { sequences, outcome } = await drain(followConsumer({ api, limit: 10, start: () => ({ position: 'cursor', cursor: 'c5' }), accept: (v) => BigInt(v.acknowledged.sequence) <= 5n, sleep: noSleep }));
  assert.deepEqual(calls.map((c) => `${c.method} ${c.url.split('?')[0]}`).slice(0, 3), ['POST /v1/processors/erc20/consumers/sink/lease', 'DELETE /v1/processors/erc20/consumers/sink', 'POST /v1/processors/erc20/consumers']);
  assert.deepEqual(sequences, [], 'nothing before the reset envelope');
  assert.ok(outcome.kind === 'reset_required' && outcome.envelope?.sequence === '6', 'a reset_required envelope stops the follower');
});

test('an empty batch waits on the change head (a read) until it passes the delivered watermark; a 413 lowers the batch to the node\'s maximum', async (t) => {
  let heads = 0;
  let batches = 0;
  const { base, calls } = await scriptedNode(t, (seen, response) => {
    if (seen.url.endsWith('/lease')) return json(response, 200, view(0));
    if (seen.url.endsWith('/changes/head')) {
      heads += 1;
      return json(response, 200, { sequence: heads < 3 ? '4' : '5', cursor: null });
    }
    if (seen.url.includes('/changes?')) {
      if (seen.url.endsWith('limit=5000')) return error(response, 413, 'query_too_expensive', { limit: 5000, maxPageLimit: 1000 });
      batches += 1;
      if (batches === 1) return json(response, 200, { data: [], nextCursor: null, consumer: view(0, 4) });
      return json(response, 200, { data: [change(5)], nextCursor: null, consumer: view(0, 5) });
    }
    error(response, 500, 'internal');
  });
  const api = consumerApi(createNodeClient({ baseUrl: base }), 'erc20', { id: 'sink', credential: SECRET, role: 'required', leaseTtlSeconds: 60 });
  const limits: number[] = [];
  const batchesSeen = followConsumer({ api, limit: 5000, idlePollMs: 1, start: () => ({ position: 'earliest_retained' }), onLimit: (limit) => limits.push(limit) });
  const first = await batchesSeen.next();
  assert.deepEqual(first.done ? null : first.value.data.map((c) => c.sequence), ['5']);
  assert.deepEqual(limits, [1000]);
  assert.equal(heads, 3, 'the head was read until it moved past the delivered change');
  assert.equal(calls.filter((c) => c.url.endsWith('/changes/head')).every((c) => c.credential === undefined), true, 'the head needs no consumer credential');
  await batchesSeen.return({ kind: 'aborted', lastCursor: null });
});

test('authentication and validation answers surface as errors; an abort stops without one', async (t) => {
  const { base } = await scriptedNode(t, (seen, response) => {
    if (seen.url.endsWith('/lease')) return error(response, 403, 'forbidden');
    error(response, 500, 'internal');
  });
  const api = consumerApi(createNodeClient({ baseUrl: base }), 'erc20', { id: 'sink', credential: SECRET, role: 'required', leaseTtlSeconds: 60 });
  await assert.rejects(() => drain(followConsumer({ api, limit: 10, start: () => ({ position: 'earliest_retained' }), sleep: noSleep })), (e: unknown) => e instanceof NodeHttpError && e.status === 403);
  const controller = new AbortController();
  controller.abort();
  const { outcome } = await drain(followConsumer({ api, limit: 10, start: () => ({ position: 'earliest_retained' }), signal: controller.signal }));
  assert.deepEqual(outcome, { kind: 'aborted', lastCursor: null });
});
