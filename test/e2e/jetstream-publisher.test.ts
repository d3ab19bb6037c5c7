/**
 * The `publisher` lane (actors/publisher) through real processes: a node with `[delivery.jetstream]` on and a real
 * `nats-server`; the node is killed (`kill -9`) several times while it publishes and restarted on the same store; the
 * stream then holds every change of the instance exactly once, in order, byte-identical to the node's own
 * `GET /v1/processors/blobs/changes` pages.
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
