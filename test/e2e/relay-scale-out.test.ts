/**
 * Many relays, one feed (issue 30 points 5 and 6), through real processes:
 *
 * - three relays behind Debian's nginx with examples/scale-out/nginx.conf (ports substituted): an `eventsource`
 *   client follows the erc20 stream through nginx while relays are killed (`kill -9`) and restarted, and receives
 *   every change once, in order, byte-identical to the node's own `/changes` — reorg `undo` envelopes and
 *   `finalized` markers in the node's order;
 * - a three-server JetStream cluster with R3 streams: `kill -9` of the stream leader while the node publishes, and
 *   of the node while it publishes; the stream then holds every change exactly once, and relays keep serving from
 *   the remaining servers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { decodePublication } from '../../store/publication-messages.js';
import { PROJECT_ROOT } from '../support/paths.js';
import { freePort } from '../support/ports.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { startNatsCluster, startNatsServer } from '../support/nats-server.js';
import { relayJetstreamToml, startRelayProcess, type RelayProcess } from '../support/relay-process.js';
import { recordEventSource } from '../api/sse/sse-clients.js';
import { NGINX, startNginx } from '../support/nginx.js';

const FAST = ['devnet.block_time_ms=150', 'devnet.reorg_every=6', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'runtime.pool_threads=1'];
const STREAM = 'CHANGES';
const PREFIX = 'cdn';
const ERC20 = '[[processors]]\nid = "erc20"\nkind = "erc20"\ntokens = "*"\ndelivery = true\n';

function nodeToml(servers: readonly string[], replicas: 1 | 3): string {
  return `[delivery.jetstream]\nenabled = true\nservers = [${servers.map((s) => JSON.stringify(s)).join(', ')}]\nstream = "${STREAM}"\nsubject_prefix = "${PREFIX}"\nreplicas = ${replicas}\n${ERC20}`;
}

/** Every envelope of `processor` the node serves, as bytes of its page, by sequence (1..). */
async function nodeEnvelopes(node: NodeProcess, processor: string, through: number): Promise<string[]> {
  const out: string[] = [];
  let after: string | null = null;
  while (out.length < through) {
    const text = await (await fetch(`${node.baseUrl}/v1/processors/${processor}/changes?limit=1000${after ? `&after=${after}` : ''}`)).text();
    const body = JSON.parse(text) as { data: Array<{ cursor: string }> };
    if (body.data.length === 0) break;
    for (const envelope of body.data) out.push(JSON.stringify(envelope));
    after = body.data[body.data.length - 1]!.cursor;
  }
  return out;
}

/** examples/scale-out/nginx.conf with this test's ports and folder. */
function nginxConfig(dir: string, listen: number, relays: readonly number[], api: number): string {
  const example = readFileSync(join(PROJECT_ROOT, 'examples', 'scale-out', 'nginx.conf'), 'utf8');
  const upstream = relays.map((port) => `        server 127.0.0.1:${port} max_fails=1 fail_timeout=2s;`).join('\n');
  return example
    .replace(/ {8}server 127\.0\.0\.1:8090[^\n]*\n {8}server 127\.0\.0\.1:8091[^\n]*/, upstream)
    .replace('server 127.0.0.1:8080;', `server 127.0.0.1:${api};`)
    .replace('listen 127.0.0.1:8443;', `listen 127.0.0.1:${listen};`)
    .replaceAll('data/nginx/', `${dir}/`);
}

test('three relays behind nginx: an eventsource client sees every change once, in order, byte-identical to the node, while relays are killed and restarted', { skip: NGINX ? false : 'nginx is not installed (apt-get install nginx-light; .ci/run installs it)' }, async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const node = await startNodeProcess({ toml: nodeToml([server.url], 1), sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  const relays: RelayProcess[] = [];
  for (let i = 0; i < 3; i += 1) {
    const relay = await startRelayProcess({ dir: node.dir, toml: relayJetstreamToml([server.url], STREAM, PREFIX), sets: ['sse.heartbeat_seconds=1'] });
    t.after(() => relay.stop('SIGKILL'));
    relays.push(relay);
  }
  const listen = await freePort();
  const nginxDir = join(node.dir, 'nginx');
  for (const temp of ['client', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(nginxDir, temp), { recursive: true });
  const nginx = startNginx(t, nginxDir, nginxConfig(nginxDir, listen, relays.map((r) => r.port), Number(new URL(node.baseUrl).port)));
  const proxy = `http://127.0.0.1:${listen}`;
  await waitUntil(node, async () => {
    nginx.checkAlive();
    return (await fetch(`${proxy}/v1/processors/erc20/changes/head`)).status === 200;
  }, 30_000);

  // From the first change on: the client follows through nginx, which picks a relay per connection.
  const client = recordEventSource(t, `${proxy}/v1/processors/erc20/stream`);
  const changes = () => client.events.filter((e) => e.type !== 'hello');
  await client.waitFor(() => changes().length >= 50, 60_000);
  for (let round = 0; round < 3; round += 1) {
    // Kill two of the three (the client's relay among them, whichever it is), let the stream run, restart them.
    const seen = changes().length;
    const victims = [relays[round % 3]!, relays[(round + 1) % 3]!];
    await Promise.all(victims.map((relay) => relay.stop('SIGKILL')));
    await client.waitFor(() => changes().length >= seen + 100, 60_000);
    await Promise.all(victims.map((relay) => relay.restart()));
  }
  const received = changes();
  const last = Number((JSON.parse(received[received.length - 1]!.data) as { sequence: string }).sequence);
  const expected = await nodeEnvelopes(node, 'erc20', last);
  assert.equal(received.length, last, 'every change once: as many events as changes up to the last one');
  const operations = new Set<string>();
  for (let i = 0; i < received.length; i += 1) {
    assert.equal(received[i]!.data, expected[i], `change ${i + 1}`);
    const envelope = JSON.parse(expected[i]!) as { cursor: string; operation: string };
    assert.equal(received[i]!.lastEventId, envelope.cursor);
    assert.equal(received[i]!.type, envelope.operation);
    operations.add(envelope.operation);
  }
  assert.ok(operations.has('undo') && operations.has('finalized'), `operations seen: ${[...operations].join(', ')}`);
  assert.ok(client.errors.length >= 1, 'the client lost its relay at least once and reconnected');
});

/** Every change sequence of `subject` in the stream, in stream order, read message by message. */
async function streamSequences(jsm: JetStreamManager, subject: string): Promise<bigint[]> {
  const sequences: bigint[] = [];
  const info = await jsm.streams.info(STREAM);
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
    const message = await jsm.streams.getMessage(STREAM, { seq }).catch(() => null);
    if (!message || message.subject !== subject) continue;
    for (const change of decodePublication(BigInt(message.header.get('Chain-Node-First-Sequence')), message.data)) sequences.push(change.sequence);
  }
  return sequences;
}

test('a three-server JetStream cluster (R3): kill -9 of the stream leader and of the node while it publishes; every change once, and relays keep serving', async (t) => {
  const servers = await startNatsCluster();
  t.after(() => Promise.all(servers.map((s) => s.close())));
  const urls = servers.map((s) => s.url);
  let node = await startNodeProcess({ toml: nodeToml(urls, 3), sets: FAST });
  const dir = node.dir;
  t.after(async () => { await node.stop('SIGKILL'); removeDir(dir); });
  const relays = [
    await startRelayProcess({ dir, toml: relayJetstreamToml(urls, STREAM, PREFIX) }),
    await startRelayProcess({ dir, toml: relayJetstreamToml(urls, STREAM, PREFIX) }),
  ];
  for (const relay of relays) t.after(() => relay.stop('SIGKILL'));
  const nc = await connect({ servers: urls });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc, { timeout: 10_000 });
  const relayHead = async (relay: RelayProcess) => {
    const response = await fetch(`${relay.baseUrl}/v1/processors/erc20/changes/head`);
    return response.status === 200 ? Number(((await response.json()) as { sequence: string }).sequence) : -1;
  };
  /** Waits for `check`, naming the step and where node and relays stand when it does not hold in time. */
  const step = async (what: string, check: () => Promise<boolean>) => {
    try {
      await waitUntil(node, check, 90_000);
    } catch (error) {
      const heads = await Promise.all(relays.map((relay) => relayHead(relay).catch(() => -2)));
      const nodeHead = await fetch(`${node.baseUrl}/v1/processors/erc20/changes/head`).then((r) => r.text(), String);
      const lag = await fetch(`${node.baseUrl}/metrics`).then((r) => r.text(), String).then((text) => text.split('\n').filter((line) => line.startsWith('chain_node_jetstream')).join('\n'));
      throw new Error(`${what}: relays at ${heads.join(', ')}; node ${nodeHead.slice(0, 80)}\n${lag}\n${relays.map((r) => r.output.slice(-5).join('\n')).join('\n')}\n${(error as Error).message.slice(-3000)}`);
    }
  };

  await step('200 changes served', async () => (await relayHead(relays[0]!)) >= 200);
  // The stream leader dies while the node publishes.
  const leaderName = (await jsm.streams.info(STREAM)).cluster?.leader;
  const leader = servers.find((s) => s.name === leaderName);
  assert.ok(leader, `stream leader ${leaderName}`);
  const beforeLeader = await relayHead(relays[0]!);
  await leader.stop();
  // Publication and serving go on from the other two servers.
  for (const relay of relays) await step('200 more with the stream leader down', async () => (await relayHead(relay)) >= beforeLeader + 200);
  await leader.restart();
  // The node dies while it publishes, and comes back on the same store.
  const beforeNode = await relayHead(relays[1]!);
  await node.stop('SIGKILL');
  node = await startNodeProcess({ toml: nodeToml(urls, 3), sets: FAST, dir });
  for (const relay of relays) await step('200 more after the node\'s kill -9', async () => (await relayHead(relay)) >= beforeNode + 200);

  // Exactly once: the subject holds 1..N with no gap and no repeat, and the relays serve the node's bytes.
  const sequences = await streamSequences(jsm, `${PREFIX}.erc20`);
  assert.ok(sequences.length >= beforeNode + 200);
  sequences.forEach((sequence, i) => assert.equal(sequence, BigInt(i + 1), `stream change ${i}`));
  const through = Math.min(await relayHead(relays[0]!), await relayHead(relays[1]!));
  const expected = await nodeEnvelopes(node, 'erc20', through);
  for (const relay of relays) {
    const served: string[] = [];
    let after: string | null = null;
    while (served.length < through) {
      const body = JSON.parse(await (await fetch(`${relay.baseUrl}/v1/processors/erc20/changes?limit=1000${after ? `&after=${after}` : ''}`)).text()) as { data: Array<{ cursor: string }> };
      if (body.data.length === 0) break;
      for (const envelope of body.data) served.push(JSON.stringify(envelope));
      after = body.data[body.data.length - 1]!.cursor;
    }
    assert.deepEqual(served.slice(0, through), expected.slice(0, through));
  }
});
