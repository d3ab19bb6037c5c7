/**
 * The `publisher` lane (actors/publisher) through real processes: a node with `[delivery.jetstream]` on and a real
 * `nats-server`; the node is killed (`kill -9`) several times while it publishes and restarted on the same store; the
 * stream then holds every change of the instance exactly once, in order, byte-identical to the node's own
 * `GET /v1/processors/blobs/changes` pages. With the broker down the node keeps committing and serving while the lag
 * on /metrics grows; with it back the lag drains.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { decodePublication } from '../../store/publication-messages.js';
import { headSequence, removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { startNatsServer } from '../support/nats-server.js';

const FAST = ['devnet.block_time_ms=100', 'devnet.reorg_every=8', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'runtime.pool_threads=1'];

async function pages(node: NodeProcess, upTo: number): Promise<Array<{ cursor: string; json: string }>> {
  const all: Array<{ cursor: string; json: string }> = [];
  let after: string | null = null;
  while (all.length < upTo) {
    const response = await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=100${after ? `&after=${after}` : ''}`);
    const body = await response.json() as { data: Array<Record<string, unknown> & { cursor: string }> };
    if (body.data.length === 0) break;
    // Each envelope as served: the page's JSON array holds them byte for byte (the node copies stored bytes).
    for (const envelope of body.data) all.push({ cursor: envelope.cursor, json: JSON.stringify(envelope) });
    after = body.data[body.data.length - 1]!.cursor;
  }
  return all.slice(0, upTo);
}

test('kill -9 of the node mid-publication, restarted: the stream holds every change once, in order, identical to /changes', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const nc = await connect({ servers: server.url });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const toml = `[delivery.jetstream]\nenabled = true\nservers = ["${server.url}"]\nstream = "CHANGES"\nsubject_prefix = "cdn"\nmax_message_bytes = 2048\n`;
  const published = async () => {
    try {
      const last = await jsm.streams.getMessage('CHANGES', { last_by_subj: 'cdn.blobs' });
      return Number(last?.header.get('Chain-Node-Last-Sequence') ?? 0);
    } catch {
      return 0;
    }
  };
  let node = await startNodeProcess({ toml, sets: FAST });
  const dir = node.dir;
  t.after(async () => { await node.stop('SIGKILL'); removeDir(dir); });
  for (let round = 1; round <= 3; round += 1) {
    const before = await published();
    await waitUntil(node, async () => (await published()) > before + 5, 60_000);
    await node.stop('SIGKILL');
    node = await startNodeProcess({ toml, sets: FAST, dir });
  }
  const head = await headSequence(node);
  await waitUntil(node, async () => (await published()) >= head, 60_000);
  const served = await pages(node, head);
  assert.equal(served.length, head);
  const info = await jsm.streams.info('CHANGES');
  const stream = [];
  for (let seq = 1; seq <= info.state.last_seq; seq += 1) {
    const message = await jsm.streams.getMessage('CHANGES', { seq });
    stream.push(...decodePublication(BigInt(message!.header.get('Chain-Node-First-Sequence')), message!.data));
  }
  assert.deepEqual(stream.slice(0, head).map((c) => Number(c.sequence)), Array.from({ length: head }, (_, i) => i + 1), 'every change once, in order');
  assert.deepEqual(stream.slice(0, head).map((c) => ({ cursor: c.cursor, json: c.json.toString('utf8') })), served);
});

async function metric(node: NodeProcess, name: string): Promise<number | null> {
  const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name) && l.includes('instance="blobs"'));
  return line === undefined ? null : Number(line.split(' ').pop());
}

test('the broker down is no brake: the node commits, serves and stays ready while the lag grows; the broker back, the lag drains', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const toml = `[delivery.jetstream]\nenabled = true\nservers = ["${server.url}"]\nack_timeout_ms = 1000\nretry_initial_ms = 100\n`;
  const node = await startNodeProcess({ toml, sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  await waitUntil(node, async () => ((await metric(node, 'chain_node_jetstream_published_sequence')) ?? 0) > 5, 60_000);
  await server.stop();
  const head = await headSequence(node);
  await waitUntil(node, async () => (await headSequence(node)) > head + 20, 60_000);
  assert.equal((await fetch(`${node.baseUrl}/health/ready`)).status, 200, 'readiness is unaffected');
  assert.equal((await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=5`)).status, 200, 'routes serve');
  await waitUntil(node, async () => ((await metric(node, 'chain_node_jetstream_publication_lag_changes')) ?? 0) > 20, 60_000);
  await waitUntil(node, async () => ((await metric(node, 'chain_node_jetstream_publication_lag_seconds')) ?? 0) > 0, 60_000);
  await server.restart();
  const target = await headSequence(node);
  await waitUntil(node, async () => ((await metric(node, 'chain_node_jetstream_published_sequence')) ?? 0) >= target, 60_000);
  const errors = (await (await fetch(`${node.baseUrl}/metrics`)).text()).split('\n').filter((l) => l.startsWith('chain_node_jetstream_publish_errors_total'));
  assert.ok(errors.some((line) => Number(line.split(' ').pop()) > 0), 'publish errors are counted by reason');
});

test('retention keeps unpublished changes while the broker is down, then prunes again once they are published', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const toml = `[retention]\nprune_interval_seconds = 1\n[delivery.jetstream]\nenabled = true\nservers = ["${server.url}"]\nack_timeout_ms = 1000\nretry_initial_ms = 100\n`
    + `[[processors]]\nid = "blobs"\nkind = "blobs"\nhistory_mode = "live_only"\nhistory_control = "node_owned"\noutput = "entities"\ndelivery = true\nretain_changes = 5\n`;
  const node = await startNodeProcess({ toml, sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  const tail = async () => Number(((await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=1`)).json()) as { data: Array<{ sequence: string }> }).data[0]?.sequence ?? 0);
  await waitUntil(node, async () => ((await metric(node, 'chain_node_jetstream_published_sequence')) ?? 0) > 5, 60_000);
  await server.stop();
  // The gauges refresh every second: once the lag shows, the published sequence is the one from before the stop.
  await waitUntil(node, async () => ((await metric(node, 'chain_node_jetstream_publication_lag_changes')) ?? 0) > 30, 60_000);
  const published = (await metric(node, 'chain_node_jetstream_published_sequence'))!;
  assert.ok((await tail()) <= published + 1, `the oldest retained change ${await tail()} is at most the first unpublished one ${published + 1}`);
  await server.restart();
  const head = await headSequence(node);
  await waitUntil(node, async () => ((await metric(node, 'chain_node_jetstream_published_sequence')) ?? 0) >= head, 60_000);
  await waitUntil(node, async () => (await tail()) > published + 1, 60_000);
  const nc = await connect({ servers: server.url });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const sequences: number[] = [];
  const info = await jsm.streams.info('CHAIN_NODE_CHANGES');
  // The stream keeps at most retain_changes messages per subject (its limits follow the instance's retention).
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
    const message = await jsm.streams.getMessage('CHAIN_NODE_CHANGES', { seq });
    sequences.push(...decodePublication(BigInt(message!.header.get('Chain-Node-First-Sequence')), message!.data).map((c) => Number(c.sequence)));
  }
  assert.ok(info.state.messages <= 5, `${info.state.messages} messages kept`);
  assert.deepEqual(sequences, Array.from({ length: sequences.length }, (_, i) => sequences[0]! + i), 'what the stream holds is contiguous');
  assert.ok(sequences[sequences.length - 1]! >= head);
  assert.ok(!node.output.some((line) => line.includes('retention_gap')), 'no retention gap was met');
});
