import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventSource } from 'eventsource';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const FAST = ['devnet.block_time_ms=150', 'devnet.reorg_every=8', 'devnet.reorg_depth=2', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'sse.heartbeat_seconds=1'];

interface Envelope {
  sequence: string; cursor: string; operation: string; kind: string; finality: string;
  block: { number: number; hash: string } | null;
  data: { block?: { blockNumber: number; blockHash: string }; transactions?: Array<{ txHash: string }> } | null;
}

interface Received { readonly id: string; readonly event: string; readonly envelope: Envelope }

/** Follows /stream with the eventsource package, collecting change frames, until `done` says so. */
function follow(url: string, done: (received: readonly Received[]) => boolean, timeoutMs = 60_000): Promise<{ hello: Record<string, unknown>; received: Received[]; source: EventSource }> {
  return new Promise((resolve, reject) => {
    const source = new EventSource(url);
    const received: Received[] = [];
    let hello: Record<string, unknown> | null = null;
    const timer = setTimeout(() => { source.close(); reject(new Error(`stream did not finish: ${received.length} frames`)); }, timeoutMs);
    source.addEventListener('hello', (event) => {
      assert.equal(event.lastEventId, '', 'the hello frame has no id');
      hello = JSON.parse(event.data) as Record<string, unknown>;
    });
    for (const name of ['apply', 'undo', 'finalized', 'reset_required']) {
      source.addEventListener(name, (event) => {
        received.push({ id: event.lastEventId, event: name, envelope: JSON.parse(event.data) as Envelope });
        if (done(received)) {
          clearTimeout(timer);
          resolve({ hello: hello!, received, source });
        }
      });
    }
  });
}

async function changesFrom(node: NodeProcess, after: string | null): Promise<Envelope[]> {
  const all: Envelope[] = [];
  let cursor = after;
  for (;;) {
    const response = await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=500${cursor ? `&after=${cursor}` : ''}`);
    assert.equal(response.status, 200);
    const page = await response.json() as { data: Envelope[]; nextCursor: string | null };
    all.push(...page.data);
    if (page.data.length === 0 || page.nextCursor === null) return all;
    cursor = page.nextCursor;
  }
}

test('a stream follows the devnet across a reorg, resumes without gaps, and refuses a foreign cursor', async (t) => {
  const node = await startNodeProcess({ sets: FAST });
  t.after(async () => { await node.stop(); removeDir(node.dir); });

  const seen = (r: readonly Received[], what: (r: Received) => boolean) => r.some(what);
  const { hello, received, source } = await follow(`${node.baseUrl}/v1/processors/blobs/stream`, (r) => {
    const undo = r.findIndex((x) => x.event === 'undo');
    return undo >= 0 && seen(r.slice(undo), (x) => x.event === 'apply' && x.envelope.block!.number === r[undo]!.envelope.block!.number) && seen(r.slice(undo), (x) => x.event === 'finalized');
  });
  source.close();
  assert.equal(hello.apiVersion, '1');
  assert.equal(hello.chainId, 1337);
  assert.ok(hello.coverage && hello.processor);
  assert.deepEqual(received.map((r) => Number(r.envelope.sequence)), received.map((_, i) => i + 1), 'every change once, in order, from the start of the log');
  for (const r of received) {
    assert.equal(r.id, r.envelope.cursor, 'the SSE id is the envelope cursor');
    assert.equal(r.event, r.envelope.operation);
  }
  const undoAt = received.findIndex((r) => r.event === 'undo');
  const undo = received[undoAt]!.envelope;
  assert.equal(undo.data!.block!.blockNumber, undo.block!.number, 'undo carries the previous block');
  assert.equal(undo.data!.block!.blockHash, undo.block!.hash);
  assert.ok(Array.isArray(undo.data!.transactions), 'and its transactions');
  const replacement = received.slice(undoAt).find((r) => r.event === 'apply' && r.envelope.block!.number === undo.block!.number)!;
  assert.notEqual(replacement.envelope.block!.hash, undo.block!.hash, 'the replacement is another block at the same height');
  assert.ok(received.slice(undoAt).some((r) => r.event === 'finalized' && r.envelope.finality === 'finalized'));

  const middle = received[Math.floor(received.length / 2)]!;
  const resumed = await follow(`${node.baseUrl}/v1/processors/blobs/stream?after=${middle.id}`, (r) => r.length >= 5);
  resumed.source.close();
  assert.equal(Number(resumed.received[0]!.envelope.sequence), Number(middle.envelope.sequence) + 1, 'resuming after a cursor starts right after it');
  assert.deepEqual(resumed.received.map((r) => Number(r.envelope.sequence)), resumed.received.map((_, i) => Number(middle.envelope.sequence) + 1 + i), 'no gap, no repeat');

  const polled = await changesFrom(node, null);
  assert.deepEqual(polled.slice(0, received.length).map((e) => e.cursor), received.map((r) => r.envelope.cursor), '/changes returns the same envelopes');

  const other = await startNodeProcess({ sets: FAST });
  t.after(async () => { await other.stop(); removeDir(other.dir); });
  await waitUntil(other, async () => (await changesFrom(other, null)).length > 0, 60_000);
  const foreign = (await changesFrom(other, null))[0]!.cursor;
  const rejected = await fetch(`${node.baseUrl}/v1/processors/blobs/changes?after=${foreign}`);
  assert.equal(rejected.status, 410);
  assert.equal(((await rejected.json()) as { error: { code: string } }).error.code, 'reset_required');
  const reset = await follow(`${node.baseUrl}/v1/processors/blobs/stream?after=${foreign}`, (r) => r.length >= 1);
  reset.source.close();
  assert.equal(reset.received[0]!.event, 'reset_required');
  assert.ok('coverage' in reset.received[0]!.envelope, 'reset_required carries the current coverage');
});

test('after kill -9 mid-ingest and a restart, the change log has no gap and no duplicate sequence', async (t) => {
  const node = await startNodeProcess({ sets: FAST });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  await waitUntil(node, async () => (await changesFrom(node, null)).length > 30, 60_000);
  await node.stop('SIGKILL');
  const restarted = await startNodeProcess({ dir: node.dir, sets: FAST });
  t.after(() => restarted.stop());
  const before = (await changesFrom(restarted, null)).length;
  await waitUntil(restarted, async () => (await changesFrom(restarted, null)).length > before + 20, 60_000);
  const all = await changesFrom(restarted, null);
  assert.deepEqual(all.map((e) => Number(e.sequence)), all.map((_, i) => i + 1), 'sequences 1..N, each once');
  const cursors = new Set(all.map((e) => e.cursor));
  assert.equal(cursors.size, all.length);
});
