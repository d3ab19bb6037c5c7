import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { startNatsServer } from '../support/nats-server.js';
import { relayJetstreamToml, startRelayProcess } from '../support/relay-process.js';
import { ConsumerClient, consumerBody } from './consumer-client.js';

const TOKEN = 'test-api-token-0123456789abcdef';

async function status(url: string, headers: Record<string, string> = {}): Promise<{ status: number; code: string | null; headers: Headers }> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  let code: string | null = null;
  try { code = (JSON.parse(text) as { error?: { code: string } }).error?.code ?? null; } catch { /* not JSON (metrics) */ }
  return { status: response.status, code, headers: response.headers };
}

test('with auth.token_file set, every native route needs the API bearer and the operational routes stay open', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-auth-'));
  writeFileSync(join(dir, 'api.env'), `CHAIN_NODE_API_TOKEN=${TOKEN}\n`, { mode: 0o600 });
  const node = await startNodeProcess({ dir, toml: '[auth]\ntoken_file = "api.env"\n[[processors]]\nid = "blobs"\nkind = "blobs"\n[[processors]]\nid = "erc20"\nkind = "erc20"\ntokens = "*"\n[processors.artifacts]\nretention = "full"\n[[processors]]\nid = "erc20-replay"\nkind = "erc20"\ntokens = "*"\n[processors.artifacts]\nreplay_from = "erc20"\n[[sources.history]]\nid = "devnet"\nkind = "devnet"\n', sets: ['devnet.block_time_ms=200'] });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  const base = node.baseUrl;
  const bearer = { authorization: `Bearer ${TOKEN}` };

  await t.test('operational routes answer without a bearer', async () => {
    for (const path of ['/health/live', '/health/ready', '/metrics']) assert.equal((await status(`${base}${path}`)).status, 200, path);
  });

  await t.test('native query, stream and consumer routes answer 401 without a bearer and 403 with a wrong one', async () => {
    const paths = ['/v1/status', '/v1/capabilities', '/v1/processors', '/v1/processors/blobs/status', '/v1/processors/blobs/changes?limit=1',
      '/v1/processors/blobs/changes/head', '/v1/q/blobs/blocks?limit=1', '/v1/processors/blobs/stream', '/v1/processors/blobs/consumers'];
    for (const path of paths) {
      const missing = await status(`${base}${path}`);
      assert.equal(missing.status, 401, `${path} without a bearer`);
      assert.equal(missing.code, 'unauthorized');
      assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer/);
      const wrong = await status(`${base}${path}`, { authorization: `Bearer ${TOKEN}x` });
      assert.equal(wrong.status, 403, `${path} with a wrong bearer`);
      assert.equal(wrong.code, 'forbidden');
      assert.equal((await status(`${base}${path}`, { authorization: 'Basic dXNlcjpwYXNz' })).status, 401, `${path} with another scheme`);
    }
    for (const path of paths.filter((p) => !p.endsWith('/stream'))) assert.equal((await status(`${base}${path}`, bearer)).status, 200, `${path} with the bearer`);
    const stream = await fetch(`${base}/v1/processors/blobs/stream`, { headers: bearer });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /text\/event-stream/);
    await stream.body?.cancel();
  });

  await t.test('a consumer credential does not replace the bearer; with the bearer, a wrong credential is still 403', async () => {
    const admin = new ConsumerClient(base, 'blobs', TOKEN);
    const created = await admin.create(consumerBody('app', 'credential-of-app-0001'));
    assert.equal(created.status, 201);
    const anonymous = new ConsumerClient(base);
    const noBearer = await anonymous.changes('app', 'credential-of-app-0001');
    assert.equal(noBearer.status, 401);
    assert.equal(noBearer.body.error.code, 'unauthorized');
    assert.equal((await admin.changes('app', 'credential-of-app-0001')).status, 200);
    const wrong = await admin.changes('app', 'credential-of-someone-else');
    assert.equal(wrong.status, 403);
    assert.equal(wrong.body.error.code, 'forbidden');
    // Spec §5.3: the administrative bearer alone also works on consumer-scoped calls.
    assert.equal((await admin.lease('app', undefined)).status, 200);
  });

  /** Each call answers 401 without a bearer, 403 with a wrong one, and neither with the bearer. */
  const needsBearer = async (calls: ReadonlyArray<{ method: string; path: string; body?: string }>) => {
    for (const { method, path, body } of calls) {
      const send = (headers: Record<string, string>) => fetch(`${base}${path}`, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body } : {}) });
      const missing = await send({});
      assert.equal(missing.status, 401, `${method} ${path} without a bearer`);
      assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'unauthorized');
      const wrong = await send({ authorization: `Bearer ${TOKEN}x` });
      assert.equal(wrong.status, 403, `${method} ${path} with a wrong bearer`);
      await wrong.body?.cancel();
      const allowed = await send(bearer);
      assert.ok(![401, 403].includes(allowed.status), `${method} ${path} with the bearer: ${allowed.status}`);
      await allowed.body?.cancel();
    }
  };

  await t.test('checkpoint and savepoint routes (reads and operator writes) need the bearer', async () => {
    await needsBearer([
      { method: 'GET', path: '/v1/processors/erc20/checkpoints' },
      { method: 'POST', path: '/v1/processors/erc20/checkpoints/4/restore' },
      { method: 'GET', path: '/v1/processors/erc20/savepoints' },
      { method: 'POST', path: '/v1/processors/erc20/savepoints', body: '{"id":"sp"}' },
      { method: 'GET', path: '/v1/processors/erc20/savepoints/sp' },
      { method: 'DELETE', path: '/v1/processors/erc20/savepoints/sp' },
    ]);
  });

  await t.test('artifact routes (reads, and the admin replay, release and pins) need the bearer', async () => {
    await needsBearer([
      { method: 'GET', path: '/v1/processors/erc20/artifacts/status' },
      { method: 'GET', path: '/v1/processors/erc20/artifacts/0' },
      { method: 'GET', path: '/v1/processors/erc20/artifacts/export?limit=2' },
      { method: 'POST', path: '/admin/v1/processors/erc20/artifacts/replay', body: '{"targetProcessor":"erc20-replay","fromBlock":0,"toBlock":0}' },
      { method: 'POST', path: '/admin/v1/processors/erc20/artifacts/pins', body: '{"ownerId":"pin","fromBlock":0,"toBlock":0}' },
      { method: 'DELETE', path: '/admin/v1/processors/erc20/artifacts?ownerKind=operator_pin&ownerId=pin' },
    ]);
    assert.equal((await fetch(`${base}/v1/processors/erc20/artifacts/status`, { headers: bearer })).status, 200);
  });

  await t.test('admin routes need the bearer too; JSON-RPC stays open', async () => {
    const probe = '/admin/v1/sources/devnet/probe';
    const call = (path: string, method: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { method, headers });
    for (const [path, method] of [[probe, 'POST'], ['/admin/v1/materialization-jobs', 'GET'], ['/admin/v1/materialization-jobs', 'POST'], ['/admin/v1/backfill-subscriptions', 'GET'], ['/admin/v1/backfill-subscriptions', 'POST'], ['/admin/v1/processors/blobs/rebuild', 'POST'], ['/admin/v1/processors/blobs/rebuilds', 'GET'], ['/admin/v1/processors/blobs/rebuilds/rb-blobs-1', 'GET'], ['/admin/v1/processors/blobs/rebuilds/rb-blobs-1/promote', 'POST'], ['/admin/v1/processors/blobs/rebuilds/rb-blobs-1/rollback', 'POST']] as const) {
      const missing = await call(path, method);
      assert.equal(missing.status, 401, `${method} ${path} without a bearer`);
      assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'unauthorized');
      assert.equal((await call(path, method, { authorization: `Bearer ${TOKEN}x` })).status, 403, `${method} ${path} with a wrong bearer`);
    }
    assert.equal((await call(probe, 'POST', bearer)).status, 200);
    assert.equal((await call('/admin/v1/materialization-jobs', 'GET', bearer)).status, 200);
    assert.equal((await call('/admin/v1/backfill-subscriptions', 'GET', bearer)).status, 200);
    assert.equal((await call('/admin/v1/processors/blobs/rebuilds', 'GET', bearer)).status, 200);
    assert.equal((await call('/admin/v1/processors/blobs/rebuild', 'POST', bearer)).status, 415, 'with the bearer: past auth, to the body check');
    const rpc = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) });
    assert.equal(rpc.status, 200, 'JSON-RPC has no bearer');
  });

  await t.test('the token never appears in the node log', () => {
    assert.ok(!node.output.join('\n').includes(TOKEN));
  });
});

test('a relay with auth.token_file: its delivery and consumer routes need the API bearer, the operational routes stay open, the token is never logged', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const node: NodeProcess = await startNodeProcess({
    toml: `[[processors]]\nid = "blobs"\nkind = "blobs"\n[delivery.jetstream]\nenabled = true\nservers = ["${server.url}"]\nstream = "CHANGES"\nsubject_prefix = "cdn"\n`,
    sets: ['devnet.block_time_ms=100', 'devnet.reorg_every=0', 'runtime.pool_threads=1'],
  });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  await waitUntil(node, async () => Number(((await (await fetch(`${node.baseUrl}/v1/status`)).json()) as { processors: Array<{ delivery?: { jetstream: { publishedSequence: string } } }> })
    .processors[0]?.delivery?.jetstream.publishedSequence ?? 0) > 0, 60_000);
  const token = 'relay-bearer-token-0123456789';
  writeFileSync(join(node.dir, 'relay-api.env'), `CHAIN_NODE_API_TOKEN=${token}\n`, { mode: 0o600 });
  const relay = await startRelayProcess({ dir: node.dir, toml: `[auth]\ntoken_file = "relay-api.env"\n${relayJetstreamToml([server.url], 'CHANGES', 'cdn')}` });
  t.after(() => relay.stop('SIGKILL'));
  const base = relay.baseUrl;
  for (const path of ['/v1/processors/blobs/changes', '/v1/processors/blobs/changes/head', '/v1/processors/blobs/stream', '/v1/processors/blobs/consumers']) {
    const missing = await status(`${base}${path}`);
    assert.equal(missing.status, 401, `${path} without a bearer`);
    assert.equal(missing.code, 'unauthorized');
    assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer/);
    const wrong = await status(`${base}${path}`, { authorization: 'Bearer not-the-token-at-all-xx' });
    assert.equal(wrong.status, 403, `${path} with a wrong bearer`);
    assert.equal(wrong.code, 'forbidden');
    const controller = new AbortController();
    const right = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
    assert.equal(right.status, 200, `${path} with the bearer`);
    controller.abort();
  }
  const admin = new ConsumerClient(base, 'blobs', token);
  assert.equal((await admin.create(consumerBody('app', 'credential-of-app-0001'))).status, 201, 'a consumer created through the relay');
  assert.equal((await new ConsumerClient(base).changes('app', 'credential-of-app-0001')).status, 401, 'a consumer credential does not replace the bearer');
  assert.equal((await admin.changes('app', 'credential-of-someone-else')).status, 403);
  assert.equal((await admin.changes('app', 'credential-of-app-0001')).status, 200);
  for (const path of ['/health/live', '/health/ready', '/metrics']) assert.equal((await status(`${base}${path}`)).status, 200, path);
  assert.ok(!relay.output.join('\n').includes(token), 'the token is never logged');
});
