import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { backoffDelay, createNodeClient, followChanges, NodeHttpError, runFollow, type ChangeEnvelope } from '../../../api/client/index.js';

type Script = (request: IncomingMessage, response: ServerResponse, connection: number) => void;

/** A real HTTP server answering each connection by the script; records every request URL. */
async function scriptedServer(t: { after(fn: () => unknown): void }, script: Script): Promise<{ base: string; urls: string[] }> {
  const urls: string[] = [];
  const server = createServer((request, response) => {
    urls.push(request.url ?? '');
    script(request, response, urls.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, urls };
}

function envelope(sequence: number, operation = 'apply'): ChangeEnvelope {
  return { sequence: String(sequence), cursor: `c${sequence}`, operation, kind: 'blobs.block.put', key: null, block: null, finality: 'included', data: null } as ChangeEnvelope;
}

function frame(change: ChangeEnvelope): string {
  return `id: ${change.cursor}\nevent: ${change.operation}\ndata: ${JSON.stringify(change)}\n\n`;
}

function openStream(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.write('event: hello\ndata: {"apiVersion":"1"}\n\n: heartbeat\n\n');
}

const noSleep = async () => undefined;

test('5xx and clean closes reconnect from the last fully handled cursor; reset_required stops with a typed outcome', async (t) => {
  const { base, urls } = await scriptedServer(t, (_request, response, connection) => {
    if (connection <= 2) {
      response.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"code":"not_ready","message":"x","retryable":true,"requestId":"r"}}');
      return;
    }
    openStream(response);
    if (connection === 3) response.end(frame(envelope(1)) + frame(envelope(2)));
    else if (connection === 4) response.end(frame(envelope(3)) + `id: c4\nevent: apply\ndata: {"sequence":"4"`);
    else response.end(frame(envelope(4)) + frame(envelope(5, 'reset_required')));
  });
  const reconnects: Array<{ attempt: number; reason: string }> = [];
  const handled: string[] = [];
  const hellos: unknown[] = [];
  const outcome = await runFollow({
    client: createNodeClient({ baseUrl: base }), processor: 'blobs', after: 'c0', sleep: noSleep,
    onReconnect: (info) => reconnects.push(info), onHello: (hello) => hellos.push(hello),
  }, (change) => { handled.push(change.sequence); });
  assert.deepEqual(handled, ['1', '2', '3', '4'], 'a frame cut mid-way is never handed over');
  assert.deepEqual(urls, ['/v1/processors/blobs/stream?after=c0', '/v1/processors/blobs/stream?after=c0', '/v1/processors/blobs/stream?after=c0', '/v1/processors/blobs/stream?after=c2', '/v1/processors/blobs/stream?after=c3']);
  assert.deepEqual(reconnects.map((r) => r.attempt), [1, 2, 1, 1], 'backoff grows over failures and resets after a delivered change');
  assert.match(reconnects[0]!.reason, /503/);
  assert.equal(hellos.length, 3);
  assert.equal(outcome.kind, 'reset_required');
  assert.ok(outcome.kind === 'reset_required' && outcome.action === 'snapshot_or_resubscribe' && outcome.lastCursor === 'c4' && outcome.envelope?.sequence === '5');
});

test('a 410 reset_required answer stops with the typed outcome; 4xx authentication and validation errors surface', async (t) => {
  const answers: Array<[number, string]> = [[410, 'reset_required'], [401, 'unauthorized'], [400, 'cursor_invalid'], [409, 'delivery_disabled']];
  const { base } = await scriptedServer(t, (_request, response, connection) => {
    const [status, code] = answers[connection - 1]!;
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code, message: 'no', retryable: false, requestId: 'r' } }));
  });
  const client = createNodeClient({ baseUrl: base, token: 't' });
  const outcome = await runFollow({ client, processor: 'blobs', after: 'cX', sleep: noSleep }, () => undefined);
  assert.equal(outcome.kind, 'reset_required');
  for (const code of ['unauthorized', 'cursor_invalid', 'delivery_disabled']) {
    await assert.rejects(() => runFollow({ client, processor: 'blobs', sleep: noSleep }, () => undefined), (error: unknown) => error instanceof NodeHttpError && error.code === code);
  }
});

test('an abort signal stops the follower without an error, mid-stream or while waiting to reconnect', async (t) => {
  const { base } = await scriptedServer(t, (_request, response, connection) => {
    if (connection <= 2) {
      openStream(response);
      response.end(frame(envelope(1)));
      return;
    }
    response.writeHead(503).end();
  });
  const client = createNodeClient({ baseUrl: base });
  const controller = new AbortController();
  const outcome = await runFollow({ client, processor: 'blobs', signal: controller.signal }, () => { controller.abort(); });
  assert.deepEqual(outcome, { kind: 'aborted', lastCursor: 'c1' }, 'the change handled before the abort is the resume position');
  const waiting = new AbortController();
  const changes = followChanges({ client, processor: 'blobs', signal: waiting.signal, backoff: { initialMs: 60_000, maxMs: 60_000 }, onReconnect: () => setTimeout(() => waiting.abort(), 20) });
  const first = await changes.next();
  assert.equal(first.done, false);
  const started = Date.now();
  const end = await changes.next();
  assert.equal(end.done, true);
  assert.deepEqual(end.value, { kind: 'aborted', lastCursor: 'c1' });
  assert.ok(Date.now() - started < 30_000, 'the abort cut the 60 s backoff short');
});

test('backoff is exponential, capped, and jittered within its fraction', () => {
  const policy = { initialMs: 100, maxMs: 1000, jitter: 0.5 };
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(policy, n, () => 0)), [100, 200, 400, 800, 1000, 1000]);
  assert.deepEqual([1, 2, 3].map((n) => backoffDelay(policy, n, () => 1)), [50, 100, 200]);
  for (let i = 0; i < 100; i += 1) {
    const delay = backoffDelay(policy, 3, Math.random);
    assert.ok(delay >= 200 && delay <= 400);
  }
});
