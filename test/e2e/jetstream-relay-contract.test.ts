/**
 * What a relay reads of a real node publishing to a real `nats-server` (docs/jetstream.md "Descriptors", "Resets",
 * `Chain-Node-Committed-At`): the processor's descriptor in the KV bucket, the commit time on the messages, the
 * publication in `/v1/status` (valid against the OpenAPI document), a retention gap and a `db backup` restore published
 * as reset markers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { descriptorKey, type PublishedDescriptor } from '../../net/jetstream/descriptors.js';
import { decodePublication } from '../../store/publication-messages.js';
import { cpSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { headSequence, removeDir, runCli, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { startNatsServer } from '../support/nats-server.js';
import { OpenApiValidator } from '../support/openapi-validator.js';

const FAST = ['devnet.block_time_ms=100', 'devnet.reorg_every=8', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'runtime.pool_threads=1'];
const validator = new OpenApiValidator();

interface Publication { publishedSequence: string; lagChanges: number; lagSeconds: number; resets: { epoch_changed: number; retention_gap: number }; state: string; subject: string }

async function publication(node: NodeProcess): Promise<Publication | undefined> {
  const response = await fetch(`${node.baseUrl}/v1/status`);
  const text = await response.text();
  assert.deepEqual(validator.check('GET', '/v1/status', response.status, response.headers.get('content-type'), text).problems, []);
  const body = JSON.parse(text) as { processors: Array<{ processor: { id: string }; delivery?: { jetstream: Publication } }> };
  return body.processors.find((p) => p.processor.id === 'blobs')?.delivery?.jetstream;
}

const publishedOf = async (node: NodeProcess) => Number((await publication(node))?.publishedSequence ?? 0);

async function natsClient(url: string, t: { after: (fn: () => Promise<void>) => void }): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
  const nc = await connect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  t.after(() => nc.close());
  return { nc, jsm: await jetstreamManager(nc) };
}

test('the node keeps the processor\'s descriptor in the KV bucket, stamps commit times, and shows publication in /v1/status', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const startedAt = Date.now();
  const toml = `[delivery.jetstream]\nenabled = true\nservers = ["${server.url}"]\nstream = "CHANGES"\nsubject_prefix = "cdn"\ndescriptor_bucket = "DESCRIBED"\n`;
  const node = await startNodeProcess({ toml, sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  await waitUntil(node, async () => (await publishedOf(node)) > 5, 60_000);
  const status = (await publication(node))!;
  assert.equal(status.state, 'connected');
  assert.equal(status.subject, 'cdn.blobs');
  const { nc, jsm } = await natsClient(server.url, t);
  // Changes committed before the publisher heard of them carry no commit time; the ones after do.
  let committedAt = 0;
  let last = (await jsm.streams.getMessage('CHANGES', { last_by_subj: 'cdn.blobs' }))!;
  await waitUntil(node, async () => {
    last = (await jsm.streams.getMessage('CHANGES', { last_by_subj: 'cdn.blobs' }))!;
    committedAt = Number(last.header.get('Chain-Node-Committed-At') || '0');
    return committedAt > 0;
  }, 30_000);
  assert.ok(committedAt >= startedAt && committedAt <= Date.now(), `commit time ${committedAt} while the node ran`);
  const kv = await new Kvm(nc).open('DESCRIBED');
  const readDescriptor = async () => (await kv.get(descriptorKey('blobs')))?.json<PublishedDescriptor>() ?? null;
  assert.equal((await kv.status()).history, 1);
  const served = await (await fetch(`${node.baseUrl}/v1/processors/blobs/status`)).json() as { processor: unknown; coverage: Record<string, unknown> };
  // The descriptor follows every acknowledged batch: once the stream holds a change, the descriptor names it or a later one.
  const lastChange = Number(last.header.get('Chain-Node-Last-Sequence'));
  await waitUntil(node, async () => Number((await readDescriptor())?.published ?? 0) >= lastChange, 30_000);
  const descriptor = (await readDescriptor())!;
  assert.deepEqual({ format: descriptor.format, storeEpoch: descriptor.storeEpoch, subject: descriptor.subject, processor: descriptor.processor },
    { format: 1, storeEpoch: last.header.get('Chain-Node-Store-Epoch'), subject: 'cdn.blobs', processor: served.processor });
  assert.deepEqual(Object.keys(descriptor.coverage).sort(), Object.keys(served.coverage).sort(), 'coverage as the node serves it');
  assert.equal(descriptor.chainId, (await (await fetch(`${node.baseUrl}/v1/status`)).json() as { chainId: number }).chainId);
  // The open network snapshot (and its /debug/network card): servers counted, never named.
  const response = await fetch(`${node.baseUrl}/v1/network/status`);
  const text = await response.text();
  assert.deepEqual(validator.check('GET', '/v1/network/status', response.status, response.headers.get('content-type'), text).problems, []);
  const card = (JSON.parse(text) as { publication: { stream: string; servers: number; processors: Array<{ id: string; state: string; publishedSequence: string }> } }).publication;
  assert.deepEqual([card.stream, card.servers, card.processors.map((p) => [p.id, p.state])], ['CHANGES', 1, [['blobs', 'connected']]]);
  assert.ok(Number(card.processors[0]!.publishedSequence) > 5);
  assert.ok(!text.includes(server.url.replace('nats://', '')), 'no server address on the open route');
  assert.match(await (await fetch(`${node.baseUrl}/debug/network`)).text(), /<h2>JetStream publication<\/h2>/);
});

test('changes retention pruned unpublished are published as a retention_gap reset marker, counted and shown in /v1/status', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  // An outbox budget of one byte: retention no longer waits for publication.
  const toml = `[retention]\nprune_interval_seconds = 1\n[budgets.outbox]\nmax_bytes = 1\n[delivery.jetstream]\nenabled = true\nservers = ["${server.url}"]\nack_timeout_ms = 1000\nretry_initial_ms = 100\n`
    + `[[processors]]\nid = "blobs"\nkind = "blobs"\nhistory_mode = "live_only"\nhistory_control = "node_owned"\noutput = "entities"\ndelivery = true\nretain_changes = 5\n`;
  // The stream made beforehand without per-subject limits (the node uses an existing stream as it is), so no marker is evicted.
  const { jsm } = await natsClient(server.url, t);
  await jsm.streams.add({ name: 'CHAIN_NODE_CHANGES', subjects: ['chain-node.changes.>'] });
  const node = await startNodeProcess({ toml, sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  await waitUntil(node, async () => (await publishedOf(node)) > 5, 60_000);
  await server.stop();
  await waitUntil(node, async () => (await publication(node))?.state === 'unreachable' && ((await publication(node))?.lagChanges ?? 0) > 20, 60_000);
  const before = await publishedOf(node);
  await server.restart();
  await waitUntil(node, async () => ((await publication(node))?.resets.retention_gap ?? 0) >= 1, 60_000);
  const head = await headSequence(node);
  await waitUntil(node, async () => (await publishedOf(node)) >= head, 60_000);
  const metrics = (await (await fetch(`${node.baseUrl}/metrics`)).text()).split('\n').filter((line) => line.startsWith('chain_node_jetstream')).join('\n');
  assert.match(metrics, /chain_node_jetstream_resets_total\{instance="blobs",reason="retention_gap"[^}]*\} [1-9]/);
  const info = await jsm.streams.info('CHAIN_NODE_CHANGES');
  const markers = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
    const message = await jsm.streams.getMessage('CHAIN_NODE_CHANGES', { seq }).catch(() => null);
    if (message?.header.get('Chain-Node-Reset')) markers.push(message);
  }
  assert.equal(markers.length, 1, 'one marker');
  const marker = markers[0]!;
  const next = Number(marker.header.get('Chain-Node-First-Sequence'));
  assert.equal(marker.header.get('Chain-Node-Reset'), 'retention_gap');
  assert.equal(marker.data.length, 0);
  assert.equal(Number(marker.header.get('Chain-Node-Last-Sequence')), next - 1);
  assert.ok(next > before + 1, `the marker skips the pruned changes: next ${next}, published before ${before}`);
  assert.equal(marker.header.get('Nats-Msg-Id'), `${marker.header.get('Chain-Node-Store-Epoch')}:blobs:reset:${next}`);
});

test('a db backup restored in place continues its subject after an epoch_changed marker, with the whole retained log under the new epoch', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const toml = `[delivery.jetstream]\nenabled = true\nservers = ["${server.url}"]\n`;
  const original = await startNodeProcess({ toml, sets: FAST });
  let restored: NodeProcess | null = null;
  t.after(async () => { await original.stop('SIGKILL'); await restored?.stop('SIGKILL'); removeDir(original.dir); });
  await waitUntil(original, async () => (await publishedOf(original)) > 5, 60_000);
  assert.equal(await original.stop('SIGTERM'), 0);
  const target = join(original.dir, 'backup');
  const backup = await runCli(['db', 'backup', target, '--config', original.configFile, '--set', `data_dir=${original.dataDir}`]);
  assert.equal(backup.code, 0, backup.stderr);
  const report = JSON.parse(backup.stdout) as { sourceEpoch: string; storeEpoch: string };
  renameSync(join(original.dataDir, 'db'), join(original.dir, 'db.before-restore'));
  cpSync(join(target, 'db'), join(original.dataDir, 'db'), { recursive: true });
  restored = await startNodeProcess({ toml, sets: FAST, dir: original.dir });
  const node = restored;
  await waitUntil(node, async () => ((await publication(node))?.resets.epoch_changed ?? 0) === 1, 60_000);
  const head = await headSequence(node);
  await waitUntil(node, async () => (await publishedOf(node)) >= head, 60_000);
  const { jsm } = await natsClient(server.url, t);
  const info = await jsm.streams.info('CHAIN_NODE_CHANGES');
  const epochs: string[] = [];
  const resumed = [];
  let marker = null;
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
    const message = (await jsm.streams.getMessage('CHAIN_NODE_CHANGES', { seq }))!;
    epochs.push(message.header.get('Chain-Node-Store-Epoch').padStart(16, '0'));
    if (message.header.get('Chain-Node-Reset')) marker = message;
    else if (marker) resumed.push(...decodePublication(BigInt(message.header.get('Chain-Node-First-Sequence')), message.data));
  }
  assert.ok(marker, 'an epoch_changed marker');
  assert.equal(marker.header.get('Chain-Node-Reset'), 'epoch_changed');
  assert.equal(marker.header.get('Chain-Node-First-Sequence'), '1', 'nothing was pruned: the whole retained log follows');
  const firstNew = epochs.indexOf(report.storeEpoch);
  assert.ok(firstNew > 0 && epochs.slice(0, firstNew).every((e) => e === report.sourceEpoch) && epochs.slice(firstNew).every((e) => e === report.storeEpoch), 'the original epoch, then only the restored one');
  assert.deepEqual(resumed.map((c) => Number(c.sequence)).slice(0, head), Array.from({ length: head }, (_, i) => i + 1), 'every change once, in order, after the marker');
  const served = await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=3`)).json() as { data: Array<{ cursor: string }> };
  assert.deepEqual(resumed.slice(0, 3).map((c) => c.cursor), served.data.map((e) => e.cursor), 'cursors of the new epoch');
});

test('an idle publisher reports the broker unreachable as soon as its connection drops, and connected again once it is back', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  // One block a minute: after the first changes nothing is published for a while, so no publish error reveals the loss.
  const node = await startNodeProcess({ toml: `[delivery.jetstream]\nenabled = true\nservers = ["${server.url}"]\n`, sets: ['devnet.block_time_ms=60000', 'runtime.pool_threads=1'] });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  const servers = async () => ((await (await fetch(`${node.baseUrl}/v1/network/status`)).json()) as { publication: { servers: number } | null }).publication?.servers;
  await waitUntil(node, async () => (await publication(node))?.state === 'connected' && (await servers()) === 1, 30_000);
  await server.stop();
  await waitUntil(node, async () => (await publication(node))?.state === 'unreachable' && (await servers()) === 0, 20_000);
  await server.restart();
  await waitUntil(node, async () => (await publication(node))?.state === 'connected' && (await servers()) === 1, 30_000);
});
