/**
 * `[actors.listener] instances = 2`: two listener workers bind the same API port (uWS sets
 * SO_REUSEPORT on Linux, so the kernel spreads connections over both). Requests and SSE streams
 * land on both instances, every processor ChangesNotice reaches both, and every stream — whichever
 * worker holds it — gets the same changes in the same order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { EventSource } from 'eventsource';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const SETS = ['actors.listener.instances=2', 'devnet.block_time_ms=150', 'devnet.reorg_every=0', 'sse.heartbeat_seconds=1'];
const HEAD = '/v1/processors/blobs/changes/head';
const CHANGES_WANTED = 4;

/** A GET on a connection of its own (no keep-alive pool), so each request is a new pick of the kernel. */
function getOnNewConnection(url: string): Promise<{ status: number; requestId: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, requestId: String(res.headers['x-request-id'] ?? '') }));
    }).on('error', reject);
  });
}

/** `metric{…actor="listener#N"…} value` per listener instance, summed over the other labels. */
async function perInstance(node: NodeProcess, metric: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
  const totals = new Map<string, number>();
  for (const match of text.matchAll(new RegExp(`^${metric}\\{([^}]*)\\} (\\S+)$`, 'gm'))) {
    const actor = /actor="(listener#\d)"/.exec(match[1]!)?.[1];
    if (actor) totals.set(actor, (totals.get(actor) ?? 0) + Number(match[2]));
  }
  return totals;
}

interface Stream {
  readonly source: EventSource;
  readonly ids: string[];
  readonly opened: Promise<void>;
}

function openStream(url: string): Stream {
  const source = new EventSource(url);
  const ids: string[] = [];
  const opened = new Promise<void>((resolve, reject) => {
    source.addEventListener('hello', () => resolve());
    source.onerror = (error) => reject(new Error(`stream failed: ${String(error.message)}`));
  });
  source.addEventListener('apply', (event) => ids.push(event.lastEventId));
  source.addEventListener('finalized', (event) => ids.push(event.lastEventId));
  return { source, ids, opened };
}

test('two listener instances share the API port; requests and streams spread over both and every stream gets the same changes', async (t) => {
  const node = await startNodeProcess({ sets: SETS, waitReady: false });
  const streams: Stream[] = [];
  t.after(async () => {
    for (const stream of streams) stream.source.close();
    await node.stop();
    removeDir(node.dir);
  });
  await waitUntil(node, async () => (await fetch(`${node.baseUrl}/health/ready`)).status === 200, 90_000);

  let head: string | null = null;
  await waitUntil(node, async () => {
    head = ((await (await fetch(node.baseUrl + HEAD)).json()) as { cursor: string | null }).cursor;
    return head !== null;
  }, 60_000);

  const replies = await Promise.all(Array.from({ length: 40 }, () => getOnNewConnection(node.baseUrl + HEAD)));
  assert.ok(replies.every((reply) => reply.status === 200));
  assert.equal(new Set(replies.map((reply) => reply.requestId)).size, replies.length, 'request ids are unique across the instances');
  // A scrape leaves out a worker that does not answer within its timeout (a loaded machine): read until both report.
  let requests = new Map<string, number>();
  await waitUntil(node, async () => (requests = await perInstance(node, 'chain_node_http_requests_total')).size === 2, 60_000).catch(() => undefined);
  assert.deepEqual([...requests.keys()].sort(), ['listener#1', 'listener#2'], 'both instances answered requests');

  // Every stream resumes after the same cursor; open them in waves until both instances hold some.
  const url = `${node.baseUrl}/v1/processors/blobs/stream?after=${head!}`;
  let holding = new Map<string, number>();
  while (streams.length < 64 && !(holding.get('listener#1')! > 0 && holding.get('listener#2')! > 0)) {
    const wave = Array.from({ length: 8 }, () => openStream(url));
    streams.push(...wave);
    await Promise.all(wave.map((stream) => stream.opened));
    holding = await perInstance(node, 'chain_node_sse_streams');
  }
  const total = (counts: Map<string, number>) => (counts.get('listener#1') ?? 0) + (counts.get('listener#2') ?? 0);
  await waitUntil(node, async () => total(holding = await perInstance(node, 'chain_node_sse_streams')) === streams.length, 60_000).catch(() => undefined);
  assert.ok(holding.get('listener#1')! > 0 && holding.get('listener#2')! > 0, `streams on both instances: ${JSON.stringify([...holding])}`);
  assert.equal((holding.get('listener#1') ?? 0) + (holding.get('listener#2') ?? 0), streams.length);

  await waitUntil(node, async () => streams.every((stream) => stream.ids.length >= CHANGES_WANTED), 60_000);
  const expected = streams[0]!.ids.slice(0, CHANGES_WANTED);
  for (const stream of streams) assert.deepEqual(stream.ids.slice(0, CHANGES_WANTED), expected, 'every stream gets the same changes, in order, from either instance');
});
