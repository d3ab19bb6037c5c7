/**
 * Finality from Beacon API endpoints, end to end with the real node on the devnet: the devnet's
 * own Beacon-API-shaped endpoint (devnet.beacon_api) followed by light-client proof from the
 * documented genesis checkpoint, with `finalized` changes on /stream; readiness that stays down
 * while no bootstrap verifies; a second endpoint that disagrees (fail-closed, both named); an
 * endpoint whose finalized block contradicts the stored chain (publication stops, said so).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventSource } from 'eventsource';
import { freePort } from '../support/ports.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

/** The devnet's genesis beacon block root for the default seed (README and config.example.toml name it). */
const DEVNET_CHECKPOINT = '0x09b0f1635ea8c671af3ba22f56bc2c58e66cb9925c5038a3ae20a9b850710b45';
const FAST = ['devnet.block_time_ms=150', 'devnet.reorg_every=0', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'finality.max_retries=0'];

async function beaconNode(port: number, urls: string[], extra: string[] = [], waitReady = true): Promise<NodeProcess> {
  return startNodeProcess({
    sets: [...FAST, `devnet.beacon_api=127.0.0.1:${port}`, 'finality.kind=beacon_api', `finality.urls=${JSON.stringify(urls)}`, ...extra],
    waitReady,
  });
}

interface Ready { status: string; reasons: string[] }
const ready = async (node: NodeProcess) => (await (await fetch(`${node.baseUrl}/health/ready`)).json()) as Ready;

/** A Beacon API in front of `upstream` whose answers `rewrite` may change. */
async function proxy(upstream: string, rewrite: (path: string, body: any) => any, route: (path: string) => string = (p) => p): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    // No event stream through a proxy: the node falls back to polling it.
    if (path.startsWith('/eth/v1/events')) return void response.writeHead(404, { 'content-type': 'application/json' }).end('{"code":404,"message":"no event stream"}');
    fetch(`${upstream}${route(path)}`).then(async (answer) => {
      const body = answer.status === 200 ? rewrite(path, await answer.json()) : await answer.text();
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
    }, () => response.writeHead(502).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const flipLast = (hex: string) => `${hex.slice(0, -2)}${(parseInt(hex.slice(-2), 16) ^ 1).toString(16).padStart(2, '0')}`;

test('light-client finality from the devnet endpoint: ready once verified, finalized changes on /stream', async (t) => {
  const port = await freePort();
  const node = await beaconNode(port, [`http://127.0.0.1:${port}`], [`finality.checkpoint_root=${DEVNET_CHECKPOINT}`]);
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  const finalized = await new Promise<{ finality: string; block: { number: number } | null }>((resolve, reject) => {
    const source = new EventSource(`${node.baseUrl}/v1/processors/blobs/stream`);
    const timer = setTimeout(() => { source.close(); reject(new Error('no finalized change')); }, 60_000);
    source.addEventListener('finalized', (event) => {
      clearTimeout(timer);
      source.close();
      resolve(JSON.parse(event.data));
    });
  });
  assert.equal(finalized.finality, 'finalized');
  assert.ok(node.output.some((line) => line.includes('light-client verified slot')), 'the finality came from the light client');
  // The devnet endpoint is the real thing an operator reads the checkpoint from.
  const header = await (await fetch(`http://127.0.0.1:${port}/eth/v1/beacon/headers/genesis`)).json() as { data: { root: string } };
  assert.equal(header.data.root, DEVNET_CHECKPOINT);
});

test('readiness stays down, naming the checkpoint, while no endpoint serves a bootstrap that verifies', async (t) => {
  const port = await freePort();
  const wrong = `0x${'12'.repeat(32)}`;
  const node = await beaconNode(port, [`http://127.0.0.1:${port}`], [`finality.checkpoint_root=${wrong}`], false);
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  // The devnet endpoint answers (its own genesis header) while the finality lane reports the unusable checkpoint.
  await waitUntil(node, async () => {
    const body = await ready(node);
    return body.status === 'not_ready' && body.reasons.some((r) => r.includes(`no endpoint served a bootstrap that verifies against checkpoint ${wrong}`) && r.includes(`has no light-client bootstrap for ${wrong}`));
  }, 60_000);
  const response = await fetch(`${node.baseUrl}/health/ready`);
  assert.equal(response.status, 503);
});

test('two endpoints that disagree fail closed: not ready, both named, nothing finalized', async (t) => {
  const port = await freePort();
  const devnet = `http://127.0.0.1:${port}`;
  const liar = await proxy(devnet, (path, body) => {
    if (path.endsWith('/finality_checkpoints') && body.data.finalized.epoch !== '0') body.data.finalized.root = flipLast(body.data.finalized.root);
    if (path.startsWith('/eth/v2/beacon/blocks/')) body.data.message.body.execution_payload.block_hash = flipLast(body.data.message.body.execution_payload.block_hash);
    return body;
  }, (path) => (path.startsWith('/eth/v2/beacon/blocks/0x') ? `/eth/v2/beacon/blocks/${flipLast(path.slice('/eth/v2/beacon/blocks/'.length))}` : path));
  t.after(() => new Promise<void>((resolve) => { liar.server.closeAllConnections(); liar.server.close(() => resolve()); }));
  const node = await beaconNode(port, [devnet, liar.url], ['finality.minimum_agreement=2'], false);
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  await waitUntil(node, async () => (await ready(node)).reasons.some((r) => r.includes('beacon endpoints disagree')), 60_000);
  const reason = (await ready(node)).reasons.find((r) => r.includes('disagree'))!;
  assert.ok(reason.includes(`${devnet}/`) && reason.includes(`${liar.url}/`), reason);
  const changes = await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=1000`)).json() as { data: Array<{ operation: string }> };
  assert.ok(!changes.data.some((c) => c.operation === 'finalized'), 'the finalized cursor did not advance');
});

test('an endpoint whose finalized block contradicts the stored chain stops publication and says so', async (t) => {
  const port = await freePort();
  const devnet = `http://127.0.0.1:${port}`;
  const forger = await proxy(devnet, (path, body) => {
    if (path.startsWith('/eth/v2/beacon/blocks/')) body.data.message.body.execution_payload.block_hash = flipLast(body.data.message.body.execution_payload.block_hash);
    return body;
  });
  t.after(() => new Promise<void>((resolve) => { forger.server.closeAllConnections(); forger.server.close(() => resolve()); }));
  const node = await beaconNode(port, [forger.url], [], false);
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  await waitUntil(node, async () => (await ready(node)).reasons.some((r) => /contradicts the canonical/.test(r)), 60_000);
  const response = await fetch(`${node.baseUrl}/health/ready`);
  assert.equal(response.status, 503);
});

test('a restarted node resumes its light client from the stored store: no second bootstrap request', async (t) => {
  const counted: string[] = [];
  let upstream = '';
  const counter = createServer((request, response) => {
    const path = request.url ?? '/';
    if (path.startsWith('/eth/v1/events')) return void response.writeHead(404, { 'content-type': 'application/json' }).end('{"code":404,"message":"no event stream"}');
    fetch(`${upstream}${path}`).then(async (answer) => {
      counted.push(`${answer.status} ${path}`);
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    }, () => response.writeHead(502).end());
  });
  await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { counter.closeAllConnections(); counter.close(() => resolve()); }));
  const url = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
  /** Bootstraps served (the devnet endpoint may not listen yet when the finality lane first asks). */
  const bootstraps = () => counted.filter((p) => p.startsWith('200 /eth/v1/beacon/light_client/bootstrap/')).length;
  const verified = (node: NodeProcess, from = 0) => node.output.slice(from).some((line) => line.includes('light-client verified slot'));

  let port = await freePort();
  upstream = `http://127.0.0.1:${port}`;
  let node = await beaconNode(port, [url], [`finality.checkpoint_root=${DEVNET_CHECKPOINT}`]);
  const dir = node.dir;
  t.after(() => removeDir(dir));
  await waitUntil(node, async () => verified(node), 60_000);
  await node.stop();
  assert.equal(bootstraps(), 1);

  port = await freePort();
  upstream = `http://127.0.0.1:${port}`;
  const before = counted.length;
  node = await startNodeProcess({
    dir,
    sets: [...FAST, `devnet.beacon_api=127.0.0.1:${port}`, 'finality.kind=beacon_api', `finality.urls=${JSON.stringify([url])}`, `finality.checkpoint_root=${DEVNET_CHECKPOINT}`],
  });
  t.after(() => node.stop());
  await waitUntil(node, async () => verified(node), 60_000);
  assert.ok(node.output.some((line) => line.includes('light client resumed from its stored store')), 'resumed from the store');
  assert.equal(bootstraps(), 1, `no bootstrap after the restart: ${counted.slice(before).join(' ')}`);
  assert.equal((await ready(node)).status, 'ready');
});

test('finality follows the endpoint event stream: finalized changes keep coming with polling all but off', async (t) => {
  const port = await freePort();
  // One poll at start (the endpoint may not listen yet), then none for ten minutes: only events can move finality.
  const node = await beaconNode(port, [`http://127.0.0.1:${port}`], [`finality.checkpoint_root=${DEVNET_CHECKPOINT}`, 'finality.poll_interval_ms=600000', 'finality.backoff_max_ms=500'], false);
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  const numbers = await new Promise<number[]>((resolve, reject) => {
    const seen: number[] = [];
    const source = new EventSource(`${node.baseUrl}/v1/processors/blobs/stream`);
    const timer = setTimeout(() => { source.close(); reject(new Error(`finalized changes seen: ${seen.join(', ')}`)); }, 90_000);
    source.addEventListener('finalized', (event) => {
      const number = (JSON.parse(event.data) as { block: { number: number } | null }).block?.number;
      if (number !== undefined && !seen.includes(number)) seen.push(number);
      if (seen.length >= 3) {
        clearTimeout(timer);
        source.close();
        resolve(seen);
      }
    });
  });
  assert.ok(numbers.length >= 3);
  assert.ok(node.output.some((line) => line.includes('beacon event stream connected')), 'the stream was used');
  assert.ok(node.output.some((line) => /light-client verified slot \d+ \(event\)/.test(line)), 'a finality update verified from the event\'s own data');
});
