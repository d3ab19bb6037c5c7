/**
 * Backfill subscriptions over the devnet history source, against the real node (spec §3.3, §4.6): each
 * subscription's consumer reads, with its own credential through the ordinary consumer routes, every block it owns
 * exactly once and in block order — including blocks another subscription filled first — from a stream of its own;
 * recompute republishes covered blocks; the processor itself still commits each block once. Idempotency, the
 * rules, bad input in the spec's error shape, cancel and delete, and kill -9 during a subscription with a restart.
 *
 * Determinism without sleeps: a first subscription reads from a history source the test holds (an HTTP server that
 * answers nothing until released), so the later ones stay queued behind it — their owned gaps are taken at creation
 * while nothing fills them — until the test releases the source and that first subscription fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { admin, appliesPerBlock, assertOncePerBlock, coverage, FAST, missingIn, nodeWithHistory } from './history-support.js';

const SUBS = '/admin/v1/backfill-subscriptions';

interface Subscription {
  id: string; state: string; mode: string; fromBlock: number; toBlock: number;
  consumer: { id: string; path: string; credential?: string };
  progress: { blocksDone: number; blocksTotal: number; publishedThrough: number | null; changesPublished: string; currentChunk: { fromBlock: number; toBlock: number } | null };
  lastError: { blockNumber: number | null; message: string } | null;
}

interface Envelope { sequence: string; cursor: string; operation: string; originKind: string; originId: string; kind: string; finality: string; block: { number: number; hash: string }; data: unknown }

function toml(heldUrl: string): string {
  return [
    '[history]', 'chunk_blocks = 4',
    '[[sources.history]]', 'id = "devnet"', 'kind = "devnet"',
    '[[sources.history]]', 'id = "held"', 'kind = "rpc"', `url = "${heldUrl}"`, 'max_retries = 0', 'request_timeout_ms = 120000',
    '[[processors]]', 'id = "blobs"', 'kind = "blobs"',
    '[[processors]]', 'id = "od"', 'kind = "blobs"', 'history_mode = "on_demand"',
    '[[processors]]', 'id = "app"', 'kind = "blobs"', 'history_mode = "on_demand"', 'history_control = "application_subscriptions"', '',
  ].join('\n');
}

/** An upstream that holds every request until `release`, then answers 500. */
async function heldSource(): Promise<{ url: string; held: () => number; release: () => void; close: () => Promise<void> }> {
  const waiting: ServerResponse[] = [];
  let released = false;
  const fail = (res: ServerResponse) => res.writeHead(500, { 'content-type': 'text/plain' }).end('held source released');
  const server = createServer((req, res) => {
    req.resume();
    if (released) fail(res);
    else waiting.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => waiting.length,
    release: () => {
      released = true;
      for (const res of waiting.splice(0)) fail(res);
    },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

async function create(node: NodeProcess, body: Record<string, unknown>, expect = 201): Promise<Subscription> {
  const answer = await admin(node, 'POST', SUBS, body);
  assert.equal(answer.status, expect, JSON.stringify(answer.json));
  return answer.json as Subscription;
}

async function subscription(node: NodeProcess, id: string): Promise<Subscription> {
  return (await admin(node, 'GET', `${SUBS}/${id}`)).json as Subscription;
}

async function waitFor(node: NodeProcess, id: string, states: readonly string[], timeoutMs = 120_000): Promise<Subscription> {
  let last: Subscription | null = null;
  await waitUntil(node, async () => {
    last = await subscription(node, id);
    return states.includes(last.state);
  }, timeoutMs);
  return last!;
}

/** Reads the consumer's changes page by page with its credential, acknowledging each page, until none is left. */
async function drain(node: NodeProcess, processor: string, consumer: string, credential: string, limit = 7): Promise<Envelope[]> {
  const all: Envelope[] = [];
  for (;;) {
    const response = await fetch(`${node.baseUrl}/v1/processors/${processor}/consumers/${consumer}/changes?limit=${limit}`, { headers: { 'x-node-consumer-credential': credential } });
    assert.equal(response.status, 200, await response.clone().text());
    const page = await response.json() as { data: Envelope[] };
    if (page.data.length === 0) return all;
    all.push(...page.data);
    const ack = await fetch(`${node.baseUrl}/v1/processors/${processor}/consumers/${consumer}/ack`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-node-consumer-credential': credential }, body: JSON.stringify({ cursor: page.data.at(-1)!.cursor }),
    });
    assert.equal(ack.status, 200, await ack.text());
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** The stream holds one `blobs.block.put` per owned block, in block order, numbered 1..n, all naming the subscription. */
function assertStream(changes: Envelope[], sub: Subscription, blocks: number[], originKind: string): void {
  const puts = changes.filter((c) => c.kind === 'blobs.block.put');
  assert.deepEqual(puts.map((c) => c.block.number), blocks, `${sub.id}: every owned block once, in block order`);
  assert.deepEqual(changes.map((c) => c.sequence), changes.map((_, i) => String(i + 1)), 'the stream has its own sequences, from 1');
  for (const change of changes) {
    assert.equal(change.operation, 'apply');
    assert.equal(change.finality, 'finalized');
    assert.equal(change.originKind, originKind);
    assert.equal(change.originId, sub.id);
  }
  const numbers = changes.map((c) => c.block.number);
  assert.deepEqual(numbers, [...numbers].sort((a, b) => a - b), 'block order');
}

test('backfill subscriptions: each consumer gets every owned block once, in order, including blocks another subscription filled first; recompute; rules, idempotency, cancel, delete, bad input; kill -9 and restart', async (t) => {
  const held = await heldSource();
  const nodeToml = toml(held.url);
  let node = await nodeWithHistory(60, nodeToml);
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); await held.close(); });
  await waitUntil(node, async () => (await coverage(node, 'app')).finalizedThrough !== null, 60_000);
  const start = (await coverage(node, 'app')).available[0]!.fromBlock;
  assert.ok(start > 50, `app starts at the journal head of its first run (${start})`);
  await waitUntil(node, async () => ((await coverage(node, 'app')).finalizedThrough ?? 0) >= start + 3, 60_000);
  assert.deepEqual(missingIn(await coverage(node, 'app'), 0, start - 1), range(0, start - 1));

  // X holds the runner: it reads from the held source.
  const x = await create(node, { processor: 'app', fromBlock: start, toBlock: start + 3, mode: 'recompute', idempotencyKey: 'x', source: 'held', consumer: { id: 'x' } });
  await waitUntil(node, async () => held.held() > 0, 60_000);
  assert.equal((await subscription(node, x.id)).state, 'running');

  // A owns 10..20; B owns 0..30 (10..20 still missing: A is queued behind X); R recomputes 25..start+2.
  const a = await create(node, { processor: 'app', fromBlock: 10, toBlock: 20, mode: 'fill_missing', idempotencyKey: 'a', consumer: { id: 'a', credential: 'a-credential-0123456789' } });
  assert.equal(a.state, 'queued');
  assert.equal(a.progress.blocksTotal, 11);
  assert.equal(a.consumer.credential, undefined, 'a credential the body gave is not echoed');
  const b = await create(node, { processor: 'app', fromBlock: 0, toBlock: 30, mode: 'fill_missing', idempotencyKey: 'b', consumer: { id: 'b', leaseTtlSeconds: 60 } });
  assert.equal(b.progress.blocksTotal, 31, 'B owns the gaps at its creation, 10..20 included');
  assert.equal(typeof b.consumer.credential, 'string', 'the generated credential is answered once');
  const r = await create(node, { processor: 'app', fromBlock: 25, toBlock: start + 2, mode: 'recompute', idempotencyKey: 'r', consumer: { id: 'r', role: 'best_effort' } });
  assert.equal(r.progress.blocksTotal, start + 2 - 25 + 1);

  // Idempotency: same key, body and credential → the same subscription (no credential in the answer); else 409.
  const aBody = { processor: 'app', fromBlock: 10, toBlock: 20, mode: 'fill_missing', idempotencyKey: 'a', consumer: { id: 'a', credential: 'a-credential-0123456789' } };
  const again = await create(node, aBody, 200);
  assert.equal(again.id, a.id);
  for (const other of [{ ...aBody, toBlock: 19 }, { ...aBody, consumer: { id: 'a', credential: 'another-credential-0123' } }]) {
    const conflict = await admin(node, 'POST', SUBS, other);
    assert.equal(conflict.status, 409, JSON.stringify(other));
    assert.equal(conflict.json.error.code, 'conflict');
  }
  // A taken consumer id, either way round.
  assert.equal((await admin(node, 'POST', SUBS, { ...aBody, idempotencyKey: 'a2' })).status, 409);
  const ordinary = await fetch(`${node.baseUrl}/v1/processors/app/consumers`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'a', role: 'required', start: { position: 'earliest_retained' }, leaseTtlSeconds: 60, credential: 'ordinary-credential-0123' }),
  });
  assert.equal(ordinary.status, 409);
  // A non-terminal subscription cannot be deleted; its consumer goes with it, never alone.
  assert.equal((await admin(node, 'DELETE', `${SUBS}/${a.id}`)).status, 409);
  assert.equal((await admin(node, 'DELETE', '/v1/processors/app/consumers/a')).status, 409);
  // Cancel of a queued subscription: at once.
  const c = await create(node, { processor: 'app', fromBlock: 0, toBlock: 5, mode: 'recompute', idempotencyKey: 'c', consumer: { id: 'c' } });
  const cancelled = await admin(node, 'POST', `${SUBS}/${c.id}/cancel`);
  assert.equal(cancelled.status, 200);
  assert.equal(cancelled.json.state, 'cancelled');

  // Release the held source: X fails, naming why; A, B and R run in turn.
  held.release();
  const xDone = await waitFor(node, x.id, ['completed', 'failed', 'cancelled']);
  assert.equal(xDone.state, 'failed');
  assert.match(xDone.lastError!.message, /500|held/);
  for (const sub of [a, b, r]) {
    const done = await waitFor(node, sub.id, ['completed', 'failed', 'cancelled']);
    assert.equal(done.state, 'completed', JSON.stringify(done.lastError));
    assert.equal(done.progress.blocksDone, done.progress.blocksTotal);
  }

  const aChanges = await drain(node, 'app', 'a', 'a-credential-0123456789');
  assertStream(aChanges, a, range(10, 20), 'historical_backfill');
  const bChanges = await drain(node, 'app', 'b', b.consumer.credential!, 5);
  assertStream(bChanges, b, range(0, 30), 'historical_backfill');
  const rChanges = await drain(node, 'app', 'r', r.consumer.credential!);
  assertStream(rChanges, r, range(25, start + 2), 'recompute');
  // B republished the blocks A filled first: the same verified block, the same payload.
  for (const n of range(10, 20)) {
    const fromA = aChanges.find((ch) => ch.block.number === n)!;
    const fromB = bChanges.find((ch) => ch.block.number === n)!;
    assert.equal(fromB.block.hash, fromA.block.hash);
    assert.deepEqual(fromB.data, fromA.data);
  }
  // Read again: nothing new (acknowledged); the processor committed each block once, in its own log.
  assert.deepEqual(await drain(node, 'app', 'a', 'a-credential-0123456789'), []);
  assert.deepEqual(missingIn(await coverage(node, 'app'), 0, 30), []);
  assertOncePerBlock(await appliesPerBlock(node, 'app'), 0, start + 2);

  // One room: the subscription consumers are listed with the processor's; credentials and cursors do not cross.
  const listed = await admin(node, 'GET', '/v1/processors/app/consumers');
  assert.deepEqual(listed.json.data.map((cons: { id: string }) => cons.id), ['a', 'b', 'c', 'r', 'x']);
  const crossRead = await fetch(`${node.baseUrl}/v1/processors/app/consumers/b/changes`, { headers: { 'x-node-consumer-credential': 'a-credential-0123456789' } });
  assert.equal(crossRead.status, 403);
  const crossAck = await fetch(`${node.baseUrl}/v1/processors/app/consumers/b/ack`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-node-consumer-credential': b.consumer.credential! }, body: JSON.stringify({ cursor: aChanges[0]!.cursor }),
  });
  assert.equal(crossAck.status, 410, 'a cursor of another stream is refused');
  assert.equal(((await crossAck.json()) as { error: { code: string } }).error.code, 'reset_required');

  // List; DELETE of terminal subscriptions is the retry boundary (consumer and key go with it).
  const list = await admin(node, 'GET', SUBS);
  assert.deepEqual(list.json.data.map((s: { id: string }) => s.id), [x.id, a.id, b.id, r.id, c.id]);
  assert.equal((await admin(node, 'DELETE', `${SUBS}/${c.id}`)).status, 204);
  assert.equal((await admin(node, 'GET', `${SUBS}/${c.id}`)).status, 404);
  assert.equal((await admin(node, 'DELETE', `${SUBS}/${a.id}`)).status, 204);
  assert.equal((await admin(node, 'GET', '/v1/processors/app/consumers/a')).status, 404);
  const recreated = await create(node, aBody);
  assert.notEqual(recreated.id, a.id);
  assert.equal(recreated.progress.blocksTotal, 0, 'nothing is missing any more');
  assert.equal((await waitFor(node, recreated.id, ['completed', 'failed'])).state, 'completed');
  assert.deepEqual(await drain(node, 'app', 'a', 'a-credential-0123456789'), []);

  // The rules, each named; bad input in the spec's error shape.
  for (const processor of ['od', 'blobs']) {
    const refused = await admin(node, 'POST', SUBS, { ...aBody, processor, idempotencyKey: `rule-${processor}`, consumer: { id: 'z' } });
    assert.equal(refused.status, 422);
    assert.equal(refused.json.error.code, 'unsupported_capability');
    assert.match(refused.json.error.message, /history_control = "application_subscriptions" and history_mode = "on_demand"/);
  }
  const unfinalized = await admin(node, 'POST', SUBS, { ...aBody, toBlock: 10_000_000, idempotencyKey: 'high', consumer: { id: 'z' } });
  assert.equal(unfinalized.status, 409);
  assert.match(unfinalized.json.error.message, /finalized/);
  assert.equal((await admin(node, 'POST', SUBS, { ...aBody, processor: 'nope', idempotencyKey: 'n', consumer: { id: 'z' } })).status, 404);
  assert.equal((await admin(node, 'POST', SUBS, { ...aBody, source: 'nope', idempotencyKey: 'n2', consumer: { id: 'z' } })).status, 404);
  for (const bad of [{ ...aBody, fromBlock: 5, toBlock: 4 }, { ...aBody, fromBlock: -1 }, { ...aBody, mode: 'everything' }, { ...aBody, fromBlock: '0' },
    { ...aBody, consumer: undefined }, { ...aBody, consumer: { id: '/x' } }, { ...aBody, consumer: { id: 'z', credential: 'short' } }, { ...aBody, extra: 1 }, {}]) {
    const answer = await admin(node, 'POST', SUBS, bad);
    assert.equal(answer.status, 400, JSON.stringify(bad));
    assert.equal(answer.json.error.code, 'invalid_request');
    assert.equal(typeof answer.json.error.requestId, 'string');
  }
  assert.equal((await admin(node, 'GET', `${SUBS}/constructor`)).status, 404);
  assert.equal((await admin(node, 'GET', `${SUBS}/bs-000000000000-00000000`)).status, 404);
  assert.equal((await admin(node, 'POST', `${SUBS}/bs-000000000000-00000000/cancel`)).status, 404);
  assert.equal((await admin(node, 'DELETE', `${SUBS}/bs-000000000000-00000000`)).status, 404);

  // kill -9 during a subscription (chunks of one block), restart: it resumes after its last published block.
  const killToml = nodeToml.replace('chunk_blocks = 4', 'chunk_blocks = 1');
  const dir = node.dir;
  await node.stop('SIGTERM');
  node = await startNodeProcess({ dir, toml: killToml, sets: FAST });
  const k = await create(node, { processor: 'app', fromBlock: 0, toBlock: 50, mode: 'recompute', idempotencyKey: 'k', consumer: { id: 'k', credential: 'k-credential-0123456789' } });
  let seen = await subscription(node, k.id);
  while (seen.state !== 'completed' && (seen.progress.publishedThrough ?? -1) < 8) seen = await subscription(node, k.id);
  const interrupted = seen.state !== 'completed';
  await node.stop('SIGKILL');
  node = await startNodeProcess({ dir, toml: killToml, sets: FAST });
  const kDone = await waitFor(node, k.id, ['completed', 'failed']);
  assert.equal(kDone.state, 'completed', JSON.stringify(kDone.lastError));
  assertStream(await drain(node, 'app', 'k', 'k-credential-0123456789', 13), k, range(0, 50), 'recompute');
  assertOncePerBlock(await appliesPerBlock(node, 'app'), 0, 50);
  t.diagnostic(`the kill -9 came ${interrupted ? 'mid-way' : 'after completion'} (published through ${seen.progress.publishedThrough})`);
  assert.equal(await node.stop('SIGTERM'), 0);
});
