/**
 * Two nodes (two stores, two epochs) configured with the same stream and instance, started together against one real
 * `nats-server`: the fence lets exactly one write the subject, the other is refused (`foreign_publisher`, state
 * `refused` in /v1/status), and the subject never holds a message of the refused store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { startNatsServer } from '../support/nats-server.js';

const FAST = ['devnet.block_time_ms=100', 'devnet.reorg_every=8', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'runtime.pool_threads=1'];

interface Publication { state: string; publishedSequence: string }

async function publicationOf(node: NodeProcess): Promise<Publication | undefined> {
  const body = await (await fetch(`${node.baseUrl}/v1/status`)).json() as { storeEpoch: string; processors: Array<{ delivery?: { jetstream: Publication } }> };
  return body.processors[0]?.delivery?.jetstream;
}

const epochOf = async (node: NodeProcess) => ((await (await fetch(`${node.baseUrl}/v1/status`)).json()) as { storeEpoch: string }).storeEpoch;

async function foreignErrors(node: NodeProcess): Promise<number> {
  const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('chain_node_jetstream_publish_errors_total') && l.includes('reason="foreign_publisher"'));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

test('two nodes publishing the same instance to one stream: one writes, the other is refused, the subject is never interleaved', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const toml = `[delivery.jetstream]\nenabled = true\nservers = ["${server.url}"]\nack_timeout_ms = 2000\nretry_initial_ms = 100\n`;
  const nodes = await Promise.all([startNodeProcess({ toml, sets: FAST }), startNodeProcess({ toml, sets: FAST })]);
  t.after(async () => { for (const node of nodes) { await node.stop('SIGKILL'); removeDir(node.dir); } });
  const states = async () => Promise.all(nodes.map(async (node) => (await publicationOf(node))?.state));
  await waitUntil(nodes[0]!, async () => (await states()).sort().join(',') === 'connected,refused', 60_000);
  const writer = nodes[(await states()).indexOf('connected')]!;
  const refused = nodes[(await states()).indexOf('refused')]!;
  assert.ok((await foreignErrors(refused)) >= 1, 'the refusal is counted as foreign_publisher');
  assert.equal(await foreignErrors(writer), 0);
  const from = Number((await publicationOf(writer))!.publishedSequence);
  await waitUntil(writer, async () => Number((await publicationOf(writer))?.publishedSequence ?? 0) > from + 20, 60_000);
  assert.equal((await publicationOf(refused))?.state, 'refused', 'still refused: it does not retry into the subject');
  assert.equal((await fetch(`${refused.baseUrl}/health/ready`)).status, 200, 'the refused node still serves');
  const nc = await connect({ servers: server.url });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info('CHAIN_NODE_CHANGES');
  const epochs = new Set<string>();
  let expected = 1;
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
    const message = (await jsm.streams.getMessage('CHAIN_NODE_CHANGES', { seq }))!;
    epochs.add(message.header.get('Chain-Node-Store-Epoch').padStart(16, '0'));
    assert.equal(Number(message.header.get('Chain-Node-First-Sequence')), expected, `message ${seq} continues the previous one`);
    expected = Number(message.header.get('Chain-Node-Last-Sequence')) + 1;
  }
  assert.deepEqual([...epochs], [await epochOf(writer)], 'only the writer\'s store on the subject');
  assert.notEqual(await epochOf(refused), await epochOf(writer));
});
