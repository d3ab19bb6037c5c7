/**
 * Publication of the change logs beside the configured instances (issue 30 point 1), through real processes: a
 * rebuild's replacement instance is published on its own subject while it is rebuilt; once promoted, the processor's
 * descriptor names it and a relay serves the processor from it, byte for byte as the node does; a backfill
 * subscription's stream is published on `<prefix>.<bs~…>`, holding exactly what its consumer reads from the node.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { decodePublication } from '../../store/publication-messages.js';
import { descriptorKey, type PublishedDescriptor } from '../../net/jetstream/descriptors.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { startNatsServer } from '../support/nats-server.js';
import { relayJetstreamToml, startRelayProcess } from '../support/relay-process.js';
import { admin, FAST } from './history-support.js';

const STREAM = 'CHANGES';
const PREFIX = 'cdn';

/** Every change published on `subject`, in stream order: [sequence, envelope JSON]. */
async function published(jsm: JetStreamManager, subject: string): Promise<Array<[bigint, string]>> {
  const out: Array<[bigint, string]> = [];
  const info = await jsm.streams.info(STREAM);
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
    const message = await jsm.streams.getMessage(STREAM, { seq }).catch(() => null);
    if (!message || message.subject !== subject || message.data.length === 0) continue;
    for (const change of decodePublication(BigInt(message.header.get('Chain-Node-First-Sequence')), message.data)) out.push([change.sequence, change.json.toString('utf8')]);
  }
  return out;
}

/** Everything a durable consumer reads from the node, page by page, acknowledging each. */
async function drain(node: NodeProcess, processor: string, consumer: string, credential: string): Promise<string[]> {
  const out: string[] = [];
  const headers = { 'x-node-consumer-credential': credential };
  for (;;) {
    const response = await fetch(`${node.baseUrl}/v1/processors/${processor}/consumers/${consumer}/changes?limit=100`, { headers });
    const text = await response.text();
    assert.equal(response.status, 200, text);
    const page = JSON.parse(text) as { data: Array<{ cursor: string }> };
    if (page.data.length === 0) return out;
    for (const envelope of page.data) out.push(JSON.stringify(envelope));
    const ack = await fetch(`${node.baseUrl}/v1/processors/${processor}/consumers/${consumer}/ack`, {
      method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ cursor: page.data.at(-1)!.cursor }),
    });
    assert.equal(ack.status, 200, await ack.text());
  }
}

/** The node's envelopes of a processor's feed, as served, by page. */
async function served(node: NodeProcess, path: string): Promise<string[]> {
  const out: string[] = [];
  let after: string | null = null;
  for (;;) {
    const body = await (await fetch(`${node.baseUrl}${path}?limit=500${after ? `&after=${after}` : ''}`)).json() as { data: Array<{ cursor: string }> };
    if (body.data.length === 0) return out;
    for (const envelope of body.data) out.push(JSON.stringify(envelope));
    after = body.data[body.data.length - 1]!.cursor;
  }
}

test('a rebuild\'s replacement and a backfill subscription\'s stream are published; after the promote the descriptor and a relay follow the replacement', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const toml = [
    '[history]', 'chunk_blocks = 8', '[[sources.history]]', 'id = "devnet"', 'kind = "devnet"',
    '[[processors]]', 'id = "blobs"', 'kind = "blobs"', 'start_block = 0',
    '[[processors]]', 'id = "app"', 'kind = "blobs"', 'history_mode = "on_demand"', 'history_control = "application_subscriptions"',
    '[delivery.jetstream]', 'enabled = true', `servers = ["${server.url}"]`, `stream = "${STREAM}"`, `subject_prefix = "${PREFIX}"`, '',
  ].join('\n');
  const node = await startNodeProcess({ toml, sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  const nc = await connect({ servers: server.url });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const head = async () => Number(((await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes/head`)).json()) as { sequence: string }).sequence);
  await waitUntil(node, async () => (await head()) >= 20, 60_000);

  // A backfill subscription: its stream's changes are published exactly as its consumer reads them.
  // (refused with 409 until block 15 is finalized)
  let created = { status: 0, json: null as unknown as Record<string, unknown> };
  await waitUntil(node, async () => {
    created = await admin(node, 'POST', '/admin/v1/backfill-subscriptions', { processor: 'app', fromBlock: 0, toBlock: 15, mode: 'recompute', idempotencyKey: 's', consumer: { id: 's1' } });
    return created.status !== 409;
  }, 60_000);
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const subscription = created.json as unknown as { id: string; consumer: { id: string; credential: string } };
  await waitUntil(node, async () => (await admin(node, 'GET', `/admin/v1/backfill-subscriptions/${subscription.id}`)).json.state === 'completed', 120_000);
  const stream = `bs~${subscription.id.slice(3)}`;
  const consumerRead = await drain(node, 'app', 's1', subscription.consumer.credential);
  assert.ok(consumerRead.length >= 16, `the subscription's consumer read ${consumerRead.length} changes: ${JSON.stringify((await admin(node, 'GET', `/admin/v1/backfill-subscriptions/${subscription.id}`)).json)}`);
  await waitUntil(node, async () => (await published(jsm, `${PREFIX}.${stream}`)).length >= consumerRead.length, 60_000);
  const streamPublished = await published(jsm, `${PREFIX}.${stream}`);
  assert.deepEqual(streamPublished.map(([sequence]) => sequence), consumerRead.map((_, i) => BigInt(i + 1)));
  assert.deepEqual(streamPublished.map(([, json]) => json), consumerRead);

  // A rebuild: the replacement's log is published on its own subject while it is rebuilt.
  const rebuild = await admin(node, 'POST', '/admin/v1/processors/blobs/rebuild', { idempotencyKey: 'r' });
  assert.equal(rebuild.status, 201, JSON.stringify(rebuild.json));
  const id = (rebuild.json as { id: string; instance: string }).id;
  assert.equal(rebuild.json.instance, 'blobs~r1');
  await waitUntil(node, async () => (await published(jsm, `${PREFIX}.blobs~r1`)).length > 0, 120_000);
  // /v1/status shows each processor's other published change logs.
  const others = async (processor: string) => ((await (await fetch(`${node.baseUrl}/v1/status`)).json()) as { processors: Array<{ processor: { id: string }; delivery?: { jetstream: { others?: Array<{ instance: string; kind: string; subject: string }> } } }> })
    .processors.find((p) => p.processor.id === processor)?.delivery?.jetstream.others ?? [];
  await waitUntil(node, async () => (await others('blobs')).some((o) => o.instance === 'blobs~r1' && o.kind === 'replacement' && o.subject === `${PREFIX}.blobs~r1`), 30_000);
  assert.ok((await others('app')).some((o) => o.instance === stream && o.kind === 'subscription'), JSON.stringify(await others('app')));
  await waitUntil(node, async () => (await admin(node, 'GET', `/admin/v1/processors/blobs/rebuilds/${id}`)).json.state === 'ready', 180_000);
  const promoted = await admin(node, 'POST', `/admin/v1/processors/blobs/rebuilds/${id}/promote`);
  assert.equal(promoted.status, 200, JSON.stringify(promoted.json));

  // The descriptor of `blobs` names the replacement from the promote on.
  const kv = await new Kvm(jetstream(nc)).open('CHAIN_NODE_DESCRIPTORS');
  let descriptor: PublishedDescriptor | null = null;
  await waitUntil(node, async () => {
    descriptor = (await kv.get(descriptorKey('blobs')))?.json<PublishedDescriptor>() ?? null;
    return descriptor?.processor.instance === 'blobs~r1';
  }, 30_000);
  assert.equal(descriptor!.subject, `${PREFIX}.blobs~r1`);

  // A relay serves the processor from the replacement: the node's own pages.
  const relay = await startRelayProcess({ dir: node.dir, toml: relayJetstreamToml([server.url], STREAM, PREFIX) });
  t.after(() => relay.stop('SIGKILL'));
  const relayHead = async () => Number(((await (await fetch(`${relay.baseUrl}/v1/processors/blobs/changes/head`)).json()) as { sequence: string }).sequence);
  const through = await head();
  await waitUntil(node, async () => (await relayHead()) >= through, 60_000);
  const fromNode = (await served(node, '/v1/processors/blobs/changes')).slice(0, through);
  const fromRelay: string[] = [];
  let after: string | null = null;
  while (fromRelay.length < through) {
    const body = await (await fetch(`${relay.baseUrl}/v1/processors/blobs/changes?limit=500${after ? `&after=${after}` : ''}`)).json() as { data: Array<{ cursor: string }> };
    if (body.data.length === 0) break;
    for (const envelope of body.data) fromRelay.push(JSON.stringify(envelope));
    after = body.data[body.data.length - 1]!.cursor;
  }
  assert.deepEqual(fromRelay.slice(0, through), fromNode);
  assert.ok(fromNode.every((envelope) => JSON.parse(envelope).cursor), 'the served envelopes are the replacement\'s');
});

/** The value of the node's first /metrics series `name` carrying every label of `labels` (others too), or 0 when absent. */
async function metricValue(node: NodeProcess, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    if (Object.entries(labels).every(([key, value]) => (match[2] ?? '').split(',').includes(`${key}=${JSON.stringify(value)}`))) return Number(match[3]);
  }
  return 0;
}

test('retention keeps a replacement\'s unpublished changes while the broker is down: once it is back, the replacement is published without a gap', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const toml = [
    '[retention]', 'prune_interval_seconds = 1', '[history]', 'chunk_blocks = 8', '[[sources.history]]', 'id = "devnet"', 'kind = "devnet"',
    '[[processors]]', 'id = "blobs"', 'kind = "blobs"', 'start_block = 0', 'retain_changes = 5',
    '[delivery.jetstream]', 'enabled = true', `servers = ["${server.url}"]`, `stream = "${STREAM}"`, `subject_prefix = "${PREFIX}"`, 'retry_initial_ms = 100', '',
  ].join('\n');
  const node = await startNodeProcess({ toml, sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  await waitUntil(node, async () => (await metricValue(node, 'chain_node_jetstream_published_sequence', { instance: 'blobs' })) >= 20, 60_000);
  await server.stop();

  const rebuild = await admin(node, 'POST', '/admin/v1/processors/blobs/rebuild', { idempotencyKey: 'r' });
  assert.equal(rebuild.status, 201, JSON.stringify(rebuild.json));
  const id = (rebuild.json as { id: string }).id;
  await waitUntil(node, async () => (await admin(node, 'GET', `/admin/v1/processors/blobs/rebuilds/${id}`)).json.state === 'ready', 180_000);
  // Two retention passes after the replacement holds many more than retain_changes changes, none of them published.
  const passes = await metricValue(node, 'chain_node_change_log_prune_passes_total');
  await waitUntil(node, async () => (await metricValue(node, 'chain_node_change_log_prune_passes_total')) >= passes + 2, 30_000);
  assert.equal(await metricValue(node, 'chain_node_change_log_pruned_total', { instance: 'blobs~r1' }), 0, 'nothing of the replacement was pruned');

  await server.restart();
  // (The stream itself keeps retain_changes messages per subject: what it published is read from the node.)
  const replacement = async () => ((await (await fetch(`${node.baseUrl}/v1/status`)).json()) as { processors: Array<{ processor: { id: string }; delivery?: { jetstream: { others?: Array<{ instance: string; publishedSequence: string; lagChanges: number }> } } }> })
    .processors.find((p) => p.processor.id === 'blobs')?.delivery?.jetstream.others?.find((o) => o.instance === 'blobs~r1');
  await waitUntil(node, async () => Number((await replacement())?.publishedSequence ?? 0) >= 20 && (await replacement())?.lagChanges === 0, 60_000);
  assert.equal(await metricValue(node, 'chain_node_jetstream_resets_total', { instance: 'blobs~r1', reason: 'retention_gap' }), 0, 'no reset marker');
  await waitUntil(node, async () => (await metricValue(node, 'chain_node_change_log_pruned_total', { instance: 'blobs~r1' })) > 0, 30_000); // once published, pruned to its window
  assert.ok(!node.output.some((line) => line.includes('retention_gap')), 'no retention gap');
});
