/**
 * The OpenAPI document is normative (spec §9.2): a walk over every route of a running node —
 * success and error paths — with each response validated against the document (status listed for
 * the operation, content type documented, JSON body valid against its schema), and every
 * documented operation exercised with a success status. The document itself is checked by an
 * independent validator (@apidevtools/swagger-parser).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { encodeCursor } from '../../store/cursor.js';
import { PROJECT_ROOT } from '../support/paths.js';
import { OpenApiValidator } from '../support/openapi-validator.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const FAST = ['devnet.block_time_ms=100', 'devnet.reorg_every=0', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'limits.max_request_body_bytes=4096'];
const DOCUMENT = join(PROJECT_ROOT, 'api', 'openapi.yaml');
const CREDENTIAL = 'walk-credential-000001';
/** The example configuration's processors (blobs, erc20, amm; addresses as in config.example.toml), with checkpoints every 2 finalized blocks. */
const TOKENS = ['0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506', '0xc9bbd8575d55bf87fce6040031aaa9b3b4b90eae', '0x0fcde9daaf8b24c5b8f5b7b990d2489038e205bd'];
const POOLS = ['0xc46983d4522754efcc42d2419448da0cf81b425b', '0x95a7c004de0c7ca19751fa63fb6419f143b572fd', '0xcfdbc6782cde0eb45b208353070b7f77ee87a1a2'];
const COMMON = ['history_mode = "live_only"', 'history_control = "node_owned"', 'output = "entities"', 'delivery = true', 'retain_changes = 1000000'];
const TOML = [
  '[[processors]]', 'id = "blobs"', 'kind = "blobs"', ...COMMON,
  // Many retained: the devnet takes a checkpoint every 200 ms, and one the walk listed must still be there when it restores it.
  '[[processors]]', 'id = "erc20"', 'kind = "erc20"', `tokens = ${JSON.stringify(TOKENS)}`, ...COMMON, 'checkpoint_every_blocks = 2', 'checkpoints_retained = 1000',
  '[processors.artifacts]', 'retention = "full"',
  '[[processors]]', 'id = "amm"', 'kind = "amm"', `pools = ${JSON.stringify(POOLS)}`, ...COMMON, 'checkpoint_every_blocks = 2', 'checkpoints_retained = 3',
  // The admin routes: an on_demand block-local instance (the example custom kind) for materialization jobs, and the devnet history source.
  // It keeps artifacts (a job's blocks are claimed by the job too), replayed into gas-replay.
  '[[processors]]', 'id = "gas"', 'kind = "custom"', `module = ${JSON.stringify(join(PROJECT_ROOT, 'dist', 'examples', 'gas-stats', 'index.js'))}`, 'history_mode = "on_demand"', '[processors.artifacts]', 'retention = "full"',
  '[[processors]]', 'id = "gas-replay"', 'kind = "custom"', `module = ${JSON.stringify(join(PROJECT_ROOT, 'dist', 'examples', 'gas-stats', 'index.js'))}`, '[processors.artifacts]', 'replay_from = "gas"',
  // Backfill subscriptions: the same kind, history scheduled by the application.
  '[[processors]]', 'id = "gasapp"', 'kind = "custom"', `module = ${JSON.stringify(join(PROJECT_ROOT, 'dist', 'examples', 'gas-stats', 'index.js'))}`, 'history_mode = "on_demand"', 'history_control = "application_subscriptions"',
  '[[sources.history]]', 'id = "devnet"', 'kind = "devnet"', '',
].join('\n');
/** Operations the walk cannot drive to a success on a live node (none). */
const NO_LIVE_SUCCESS = new Set<string>([]);

interface Call { method?: string; path: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; expect: number; /** Statuses also accepted (still validated against the document): a race the walk retries. */ tolerate?: readonly number[] }

test('the OpenAPI document passes an independent OpenAPI 3.1 validator, and a broken copy does not', async () => {
  const api = await SwaggerParser.validate(DOCUMENT) as { openapi: string; paths: Record<string, unknown> };
  assert.equal(api.openapi, '3.1.0');
  assert.ok(Object.keys(api.paths).length >= 30);
  const dir = mkdtempSync(join(tmpdir(), 'cdn-openapi-'));
  try {
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, readFileSync(DOCUMENT, 'utf8').replace('$ref: "#/components/schemas/NodeStatus"', '$ref: "#/components/schemas/NoSuchSchema"'));
    await assert.rejects(SwaggerParser.validate(broken), /NoSuchSchema|resolve|pointer/i);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every route answers, on success and on error, only what the OpenAPI document allows', async (t) => {
  const node = await startNodeProcess({ toml: TOML, sets: FAST, readyTimeoutMs: 60_000 });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  const validator = new OpenApiValidator();
  const problems: string[] = [];
  const send = async ({ method = 'GET', path, body, rawBody, headers = {}, expect, tolerate = [] }: Call): Promise<{ status: number; json: any }> => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    } else if (rawBody !== undefined) {
      init.body = rawBody;
    }
    const response = await fetch(`${node.baseUrl}${path}`, init);
    const text = await response.text();
    const check = validator.check(method, path, response.status, response.headers.get('content-type'), text);
    problems.push(...check.problems);
    if (response.status !== expect && !tolerate.includes(response.status)) problems.push(`${method} ${path}: expected ${expect}, got ${response.status} ${text.slice(0, 300)}`);
    let json: any = null;
    try { json = JSON.parse(text); } catch { /* text bodies */ }
    return { status: response.status, json };
  };

  await waitUntil(node, async () => {
    const head = await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes/head`)).json() as { sequence: string; coverage: { finalizedThrough: number | null } };
    return Number(head.sequence) >= 20 && (head.coverage.finalizedThrough ?? 0) >= 6;
  }, 30_000);

  // Operational and status routes.
  for (const path of ['/health/live', '/health/ready', '/metrics', '/v1/openapi.json', '/v1/status', '/v1/capabilities', '/v1/processors', '/v1/processors/blobs/status', '/v1/processors/blobs/schema']) await send({ path, expect: 200 });
  await send({ method: 'POST', path: '/health/live', rawBody: '{}', expect: 405 });
  await send({ path: '/v1/does-not-exist', expect: 404 });
  await send({ path: '/v1/processors/nope/status', expect: 404 });
  await send({ path: '/v1/processors/nope/schema', expect: 404 });

  // The change log.
  const head = await send({ path: '/v1/processors/blobs/changes/head', expect: 200 });
  const page = await send({ path: '/v1/processors/blobs/changes?limit=3', expect: 200 });
  const cursor = page.json.data[1].cursor as string;
  await send({ path: `/v1/processors/blobs/changes?after=${cursor}&limit=2`, expect: 200 });
  await send({ path: '/v1/processors/blobs/changes?after=not-a-cursor', expect: 400 });
  await send({ path: '/v1/processors/blobs/changes?limit=abc', expect: 400 });
  await send({ path: '/v1/processors/blobs/changes?limit=100000000', expect: 413 });
  const foreign = encodeCursor({ epoch: 0x1234n, chainId: 1337, instance: 'blobs', sequence: 1n });
  await send({ path: `/v1/processors/blobs/changes?after=${foreign}`, expect: 410 });
  await send({ path: '/v1/processors/nope/changes', expect: 404 });
  await send({ path: '/v1/processors/nope/changes/head', expect: 404 });
  assert.ok(head.json.cursor);

  // The SSE stream: documented content type, and every change frame a valid ChangeEnvelope.
  const controller = new AbortController();
  const stream = await fetch(`${node.baseUrl}/v1/processors/blobs/stream?after=${cursor}`, { signal: controller.signal });
  problems.push(...validator.check('GET', '/v1/processors/blobs/stream', stream.status, stream.headers.get('content-type'), '').problems);
  const reader = stream.body!.getReader();
  // Complete frames only: a frame ends with a blank line, and a read may stop in the middle of one.
  const decoder = new TextDecoder();
  let text = '';
  const completeApplyFrames = () => text.split('\n\n').slice(0, -1).filter((f) => f.includes('event: apply'));
  while (completeApplyFrames().length < 2) text += decoder.decode((await reader.read()).value, { stream: true });
  controller.abort();
  await reader.cancel().catch(() => undefined);
  for (const frame of completeApplyFrames()) {
    const data = frame.split('\n').find((l) => l.startsWith('data: '))!.slice(6);
    const envelope = new OpenApiValidator(validator.document);
    const check = envelope.check('GET', '/v1/processors/blobs/changes', 200, 'application/json', JSON.stringify({ data: [JSON.parse(data)], nextCursor: null, coverage: page.json.coverage }));
    problems.push(...check.problems.map((p) => `SSE frame: ${p}`));
  }
  const reset = await fetch(`${node.baseUrl}/v1/processors/blobs/stream?after=${foreign}`);
  const resetText = await reset.text();
  problems.push(...validator.check('GET', '/v1/processors/blobs/stream', reset.status, reset.headers.get('content-type'), '').problems);
  assert.match(resetText, /event: reset_required\n/, 'a foreign cursor ends the stream with reset_required');
  await send({ path: '/v1/processors/blobs/stream?after=not-a-cursor', expect: 400 });
  await send({ path: '/v1/processors/nope/stream', expect: 404 });

  // Generic entities and query-and-follow.
  await send({ path: '/v1/processors/blobs/collections', expect: 200 });
  await send({ path: '/v1/processors/nope/collections', expect: 404 });
  const entities = await send({ path: '/v1/processors/blobs/collections/blocks/entities?limit=2', expect: 200 });
  await send({ path: '/v1/processors/blobs/collections/blocks/entities?fromBlock=0&toBlock=3', expect: 200 });
  await send({ path: '/v1/processors/blobs/collections/transactions/entities?limit=2', expect: 200 });
  await send({ path: '/v1/processors/blobs/collections/schedule/entities', expect: 200 });
  await send({ path: `/v1/processors/blobs/collections/blocks/entities?cursor=${entities.json.nextCursor}`, expect: 200 });
  await send({ path: '/v1/processors/blobs/collections/blocks/entities?fromBlock=x', expect: 400 });
  await send({ path: '/v1/processors/blobs/collections/blocks/entities?fromBlock=0&toBlock=9999', expect: 409 });
  await send({ path: '/v1/processors/blobs/collections/blocks/entities?fromBlock=0&toBlock=100000000', expect: 413 });
  await send({ path: '/v1/processors/blobs/collections/nope/entities', expect: 404 });
  await send({ path: `/v1/processors/blobs/collections/blocks/entities/${entities.json.data[0].key}`, expect: 200 });
  await send({ path: '/v1/processors/blobs/collections/blocks/entities/00ff00ff00ff00ff00', expect: 404 });
  await send({ path: '/v1/processors/blobs/collections/blocks/entities/not-hex', expect: 400 });
  const snapshot = await send({ method: 'POST', path: '/v1/processors/blobs/collections/blocks/query-and-follow', body: { limit: 2 }, expect: 200 });
  await send({ method: 'POST', path: '/v1/processors/blobs/collections/blocks/query-and-follow', body: { cursor: snapshot.json.nextCursor }, expect: 200 });
  await send({ path: `/v1/processors/blobs/collections/blocks/entities?cursor=${snapshot.json.nextCursor}`, expect: 200 });
  await send({ method: 'POST', path: '/v1/processors/blobs/collections/blocks/query-and-follow', body: { limit: 'many' }, expect: 400 });
  await send({ method: 'POST', path: '/v1/processors/blobs/collections/blocks/query-and-follow', rawBody: 'x'.repeat(8192), headers: { 'content-type': 'application/json' }, expect: 413 });
  await send({ method: 'POST', path: '/v1/processors/blobs/collections/blocks/query-and-follow', rawBody: '{}', headers: { 'content-type': 'text/plain' }, expect: 415 });
  await send({ method: 'POST', path: '/v1/processors/blobs/stream', rawBody: '{}', headers: { 'content-type': 'application/json' }, expect: 405 });
  await send({ method: 'POST', path: '/v1/processors/blobs/collections/blocks/query-and-follow', body: { fromBlock: 0, toBlock: 9999 }, expect: 409 });
  await send({ method: 'DELETE', path: `/v1/processors/blobs/query-snapshots/${snapshot.json.snapshotId}`, expect: 204 });
  await send({ path: `/v1/processors/blobs/collections/blocks/entities?cursor=${snapshot.json.nextCursor}`, expect: 410 });
  await send({ method: 'DELETE', path: '/v1/processors/blobs/query-snapshots/AAAAAAAAAAAAAAAA', expect: 404 });

  // Typed blob routes, under the alias and the canonical path.
  const blocks = await send({ path: '/v1/q/blobs/blocks?fromBlock=0&toBlock=10', expect: 200 });
  await send({ path: '/v1/processors/blobs/query/blobs/blocks?limit=2', expect: 200 });
  await send({ path: '/v1/q/blobs/blocks?fromBlock=0&toBlock=9999', expect: 409 });
  await send({ path: '/v1/q/blobs/blocks?fromBlock=0&toBlock=9999&allowPartial=true', expect: 200 });
  await send({ path: '/v1/q/blobs/blocks?fromBlock=abc', expect: 400 });
  await send({ path: '/v1/q/blobs/blocks?fromBlock=0&toBlock=100000000', expect: 413 });
  await send({ path: '/v1/q/blobs/blocks/3', expect: 200 });
  await send({ path: '/v1/processors/blobs/query/blobs/blocks/3', expect: 200 });
  await send({ path: '/v1/q/blobs/blocks/999999', expect: 409 });
  await send({ path: '/v1/q/blobs/blocks/x', expect: 400 });
  const withBlobs = (blocks.json.data as Array<{ blockNumber: number; blobCount: number }>).find((b) => b.blobCount > 0)!;
  const transactions = await send({ path: `/v1/q/blobs/transactions?blockNumber=${withBlobs.blockNumber}`, expect: 200 });
  await send({ path: `/v1/processors/blobs/query/blobs/transactions?blockNumber=${withBlobs.blockNumber}`, expect: 200 });
  await send({ path: '/v1/q/blobs/transactions', expect: 400 });
  await send({ path: '/v1/q/blobs/transactions?blockNumber=999999', expect: 409 });
  await send({ path: `/v1/q/blobs/transactions/${transactions.json.data[0].txHash}`, expect: 200 });
  await send({ path: `/v1/processors/blobs/query/blobs/transactions/${transactions.json.data[0].txHash}`, expect: 200 });
  await send({ path: `/v1/q/blobs/transactions/0x${'ab'.repeat(32)}`, expect: 404 });
  await send({ path: '/v1/q/blobs/transactions/0x12', expect: 400 });
  await send({ path: '/v1/q/blobs/schedule', expect: 200 });
  await send({ path: '/v1/q/blobs/schedule?atBlock=2', expect: 200 });
  await send({ path: '/v1/processors/blobs/query/blobs/schedule', expect: 200 });
  await send({ path: '/v1/q/blobs/schedule?atBlock=-1', expect: 400 });
  await send({ path: '/v1/q/blobs/snapshot?limit=2', expect: 200 });
  await send({ path: '/v1/processors/blobs/query/blobs/snapshot?limit=2', expect: 200 });
  await send({ path: '/v1/q/blobs/snapshot?limit=zero', expect: 400 });
  await send({ path: '/v1/processors/nope/query/blobs/blocks', expect: 404 });

  // The erc20 and amm kinds' typed routes, under the alias and the canonical path.
  let pool = '';
  await waitUntil(node, async () => {
    for (const candidate of POOLS) if ((await fetch(`${node.baseUrl}/v1/q/amm/pools/${candidate}`)).status === 200) pool = candidate;
    const listed = await (await fetch(`${node.baseUrl}/v1/processors/erc20/checkpoints`)).json() as { data: unknown[] };
    const held = await (await fetch(`${node.baseUrl}/v1/processors/erc20/collections/balances/entities?limit=1`)).json() as { data: unknown[] };
    return pool !== '' && listed.data.length >= 2 && held.data.length > 0;
  }, 60_000);
  const holders = await send({ path: '/v1/processors/erc20/collections/balances/entities?limit=1', expect: 200 });
  const holder = holders.json.data[0].data as { token: string; address: string };
  const held = await send({ path: `/v1/q/erc20/balances/${holder.token.toUpperCase().replace('0X', '0x')}/${holder.address}`, expect: 200 });
  assert.equal(held.json.token, holder.token, 'the token is answered lower-case');
  await send({ path: `/v1/processors/erc20/query/erc20/balances/${holder.token}/${holder.address}`, expect: 200 });
  const nobody = await send({ path: `/v1/q/erc20/balances/${TOKENS[0]}/0x${'00'.repeat(19)}01`, expect: 200 });
  assert.equal(nobody.json.lastChange, null, 'a holder without a row has no last change');
  await send({ path: `/v1/q/erc20/balances/${TOKENS[0]}/0x12`, expect: 400 });
  await send({ path: `/v1/q/erc20/balances/not-a-token/${holder.address}`, expect: 400 });
  await send({ path: `/v1/q/erc20/balances/0x${'ee'.repeat(20)}/${holder.address}`, expect: 404 });
  await send({ path: `/v1/processors/nope/query/erc20/balances/${holder.token}/${holder.address}`, expect: 404 });
  await send({ path: `/v1/q/amm/pools/${pool}`, expect: 200 });
  await send({ path: `/v1/processors/amm/query/amm/pools/${pool.toUpperCase().replace('0X', '0x')}`, expect: 200 });
  await send({ path: '/v1/q/amm/pools/0xzz', expect: 400 });
  await send({ path: `/v1/q/amm/pools/0x${'ee'.repeat(20)}`, expect: 404 });
  await send({ path: `/v1/processors/nope/query/amm/pools/${pool}`, expect: 404 });
  await send({ path: `/v1/processors/blobs/query/amm/pools/${pool}`, expect: 404 });
  await send({ path: `/v1/processors/amm/query/erc20/balances/${holder.token}/${holder.address}`, expect: 404 });
  for (const id of ['erc20', 'amm']) {
    await send({ path: `/v1/processors/${id}/status`, expect: 200 });
    await send({ path: `/v1/processors/${id}/schema`, expect: 200 });
  }

  // Checkpoints: listed for ordered-state instances (none for block-local ones); the current one restores, an older one is refused.
  const checkpoints = await send({ path: '/v1/processors/erc20/checkpoints', expect: 200 });
  await send({ path: '/v1/processors/amm/checkpoints', expect: 200 });
  const blockLocal = await send({ path: '/v1/processors/blobs/checkpoints', expect: 200 });
  assert.deepEqual(blockLocal.json.data, []);
  await send({ path: '/v1/processors/nope/checkpoints', expect: 404 });
  const oldest = checkpoints.json.data.at(-1).checkpoint as string;
  await send({ method: 'POST', path: `/v1/processors/erc20/checkpoints/${oldest}/restore`, expect: 409 });
  // The devnet keeps finalizing, so the newest checkpoint listed can be superseded before the restore
  // arrives (409: older than the current one); list again and retry until one restores.
  for (let current = checkpoints, attempt = 1; ; attempt += 1) {
    const restored = await send({ method: 'POST', path: `/v1/processors/erc20/checkpoints/${current.json.data[0].checkpoint as string}/restore`, expect: 200, tolerate: attempt < 50 ? [409] : [] });
    if (restored.status !== 409 || attempt >= 50) break;
    current = await send({ path: '/v1/processors/erc20/checkpoints', expect: 200 });
  }
  await send({ method: 'POST', path: '/v1/processors/erc20/checkpoints/x1/restore', expect: 400 });
  await send({ method: 'POST', path: '/v1/processors/erc20/checkpoints/3/restore', expect: 404 });
  await send({ method: 'POST', path: `/v1/processors/blobs/checkpoints/${oldest}/restore`, expect: 404 });
  await send({ method: 'POST', path: `/v1/processors/nope/checkpoints/${oldest}/restore`, expect: 404 });
  await send({ path: `/v1/processors/erc20/checkpoints/${oldest}/restore`, expect: 405 });

  // Savepoints: created, listed, exported as an archive and deleted; bad input refused.
  const savepoints = '/v1/processors/erc20/savepoints';
  await send({ method: 'POST', path: savepoints, body: { id: 'walk-1' }, expect: 201 });
  await send({ method: 'POST', path: savepoints, body: { id: 'walk-1' }, expect: 409 });
  await send({ method: 'POST', path: savepoints, body: { id: '../x' }, expect: 400 });
  await send({ method: 'POST', path: savepoints, body: {}, expect: 400 });
  await send({ method: 'POST', path: savepoints, rawBody: 'id=x', headers: { 'content-type': 'text/plain' }, expect: 415 });
  await send({ method: 'POST', path: '/v1/processors/blobs/savepoints', body: { id: 'walk-1' }, expect: 404 });
  await send({ path: savepoints, expect: 200 });
  await send({ path: '/v1/processors/blobs/savepoints', expect: 404 });
  await send({ path: `${savepoints}/walk-1`, expect: 200 });
  await send({ path: `${savepoints}/nothing`, expect: 404 });
  await send({ path: `${savepoints}/..bad`, expect: 400 });
  await send({ method: 'DELETE', path: `${savepoints}/walk-1`, expect: 204 });
  await send({ method: 'DELETE', path: `${savepoints}/walk-1`, expect: 404 });


  // The network snapshot and its page (open routes).
  const network = await send({ path: '/v1/network/status', expect: 200 });
  assert.equal(network.json.network.source, 'devnet');
  await send({ path: '/debug/network', expect: 200 });
  await send({ method: 'POST', path: '/v1/network/status', rawBody: '{}', expect: 405 });
  await send({ method: 'DELETE', path: '/debug/network', expect: 405 });

  // Durable consumers.
  const base = '/v1/processors/blobs/consumers';
  const credential = { 'x-node-consumer-credential': CREDENTIAL };
  await send({ method: 'POST', path: base, body: { id: 'walk', role: 'required', start: { position: 'earliest_retained' }, leaseTtlSeconds: 60, credential: CREDENTIAL }, expect: 201 });
  await send({ method: 'POST', path: base, body: { id: 'walk', role: 'required', start: { position: 'earliest_retained' }, leaseTtlSeconds: 60, credential: CREDENTIAL }, expect: 409 });
  await send({ method: 'POST', path: base, body: { id: 'bad', role: 'sometimes' }, expect: 400 });
  await send({ method: 'POST', path: base, body: { id: 'stale', role: 'required', start: { position: 'cursor', cursor: foreign }, leaseTtlSeconds: 60, credential: CREDENTIAL }, expect: 410 });
  await send({ path: base, expect: 200 });
  await send({ path: `${base}/walk`, expect: 200 });
  await send({ path: `${base}/nobody`, expect: 404 });
  const batch = await send({ path: `${base}/walk/changes?limit=3`, headers: credential, expect: 200 });
  await send({ path: `${base}/walk/changes?limit=3`, expect: 401 });
  await send({ path: `${base}/walk/changes?limit=3`, headers: { 'x-node-consumer-credential': 'wrong-credential-0000001' }, expect: 403 });
  await send({ path: `${base}/walk/changes?limit=abc`, headers: credential, expect: 400 });
  await send({ method: 'POST', path: `${base}/walk/ack`, body: { cursor: batch.json.data[1].cursor }, headers: credential, expect: 200 });
  await send({ method: 'POST', path: `${base}/walk/ack`, body: { cursor: head.json.cursor }, headers: credential, expect: 400 });
  await send({ method: 'POST', path: `${base}/walk/ack`, body: {}, headers: credential, expect: 400 });
  await send({ method: 'POST', path: `${base}/walk/lease`, body: { redeliver: true }, headers: credential, expect: 200 });
  await send({ method: 'POST', path: `${base}/walk/lease`, body: { redeliver: 'yes' }, headers: credential, expect: 400 });
  await send({ method: 'POST', path: `${base}/nobody/lease`, body: {}, headers: credential, expect: 404 });
  await send({ method: 'DELETE', path: `${base}/walk`, expect: 204 });
  await send({ method: 'DELETE', path: `${base}/walk`, expect: 404 });

  // Administration: materialization jobs and the source probe.
  const jobs = '/admin/v1/materialization-jobs';
  const jobBody = { processor: 'gas', fromBlock: 1, toBlock: 3, mode: 'fill_missing', idempotencyKey: 'walk' };
  const created = await send({ method: 'POST', path: jobs, body: jobBody, expect: 201 });
  await send({ method: 'POST', path: jobs, body: jobBody, expect: 200 });
  await send({ method: 'POST', path: jobs, body: { ...jobBody, toBlock: 4 }, expect: 409 });
  await send({ method: 'POST', path: jobs, body: { ...jobBody, processor: 'erc20', idempotencyKey: 'walk-2' }, expect: 422 });
  await send({ method: 'POST', path: jobs, body: { ...jobBody, processor: 'nope', idempotencyKey: 'walk-3' }, expect: 404 });
  await send({ method: 'POST', path: jobs, body: { ...jobBody, fromBlock: 'one' }, expect: 400 });
  await send({ method: 'POST', path: jobs, rawBody: '{}', expect: 415 });
  await send({ path: jobs, expect: 200 });
  const jobPath = `${jobs}/${created.json.id}`;
  await waitUntil(node, async () => ((await (await fetch(`${node.baseUrl}${jobPath}`)).json()) as { state: string }).state === 'completed', 30_000);
  await send({ path: jobPath, expect: 200 });
  await send({ method: 'POST', path: `${jobPath}/cancel`, expect: 200 });
  await send({ method: 'DELETE', path: jobPath, expect: 204 });
  await send({ path: jobPath, expect: 404 });
  await send({ method: 'DELETE', path: jobPath, expect: 404 });
  await send({ method: 'POST', path: `${jobs}/nope/cancel`, expect: 404 });
  // Backfill subscriptions, and their consumer through the ordinary consumer routes.
  const subs = '/admin/v1/backfill-subscriptions';
  const subBody = { processor: 'gasapp', fromBlock: 1, toBlock: 3, mode: 'recompute', idempotencyKey: 'walk', consumer: { id: 'subwalk', credential: 'subwalk-credential-0123' } };
  const sub = await send({ method: 'POST', path: subs, body: subBody, expect: 201 });
  await send({ method: 'POST', path: subs, body: subBody, expect: 200 });
  await send({ method: 'POST', path: subs, body: { ...subBody, toBlock: 2 }, expect: 409 });
  await send({ method: 'POST', path: subs, body: { ...subBody, processor: 'gas', idempotencyKey: 'walk-2' }, expect: 422 });
  await send({ method: 'POST', path: subs, body: { ...subBody, processor: 'nope', idempotencyKey: 'walk-3' }, expect: 404 });
  await send({ method: 'POST', path: subs, body: { ...subBody, consumer: {} }, expect: 400 });
  await send({ path: subs, expect: 200 });
  const subPath = `${subs}/${sub.json.id}`;
  await waitUntil(node, async () => ((await (await fetch(`${node.baseUrl}${subPath}`)).json()) as { state: string }).state === 'completed', 30_000);
  await send({ path: subPath, expect: 200 });
  await send({ path: '/v1/processors/gasapp/consumers/subwalk/changes?limit=10', headers: { 'x-node-consumer-credential': 'subwalk-credential-0123' }, expect: 200 });
  await send({ method: 'DELETE', path: '/v1/processors/gasapp/consumers/subwalk', expect: 409 });
  await send({ method: 'POST', path: `${subPath}/cancel`, expect: 200 });
  await send({ method: 'DELETE', path: subPath, expect: 204 });
  await send({ path: subPath, expect: 404 });
  await send({ method: 'POST', path: `${subs}/nope/cancel`, expect: 404 });
  await send({ method: 'POST', path: '/admin/v1/sources/devnet/probe', expect: 200 });
  await send({ method: 'POST', path: '/admin/v1/sources/nope/probe', expect: 404 });
  // Processor rebuilds (spec §9.5): the replacement of amm, 409 while it is rebuilt, then promote and rollback.
  await send({ method: 'POST', path: '/admin/v1/processors/amm/rebuild', body: {}, expect: 400 });
  const rebuild = await send({ method: 'POST', path: '/admin/v1/processors/amm/rebuild', body: { idempotencyKey: 'walk' }, expect: 201 });
  await send({ method: 'POST', path: '/admin/v1/processors/amm/rebuild', body: { idempotencyKey: 'walk' }, expect: 200 });
  await send({ method: 'POST', path: '/admin/v1/processors/amm/rebuild', body: { idempotencyKey: 'walk-2' }, expect: 409 });
  await send({ method: 'POST', path: '/admin/v1/processors/gasapp/rebuild', body: { idempotencyKey: 'walk-3' }, expect: 422 });
  await send({ method: 'POST', path: '/admin/v1/processors/nope/rebuild', expect: 404 });
  await send({ method: 'POST', path: '/admin/v1/processors/constructor/rebuild', expect: 404 });
  const rebuildPath = `/admin/v1/processors/amm/rebuilds/${rebuild.json.id}`;
  await send({ path: '/admin/v1/processors/amm/rebuilds', expect: 200 });
  await send({ path: `/v1/processors/${rebuild.json.instance}/status`, expect: 409, tolerate: [200] });
  await send({ method: 'POST', path: `${rebuildPath}/rollback`, expect: 409 });
  await waitUntil(node, async () => ((await (await fetch(`${node.baseUrl}${rebuildPath}`)).json()) as { state: string }).state === 'ready', 60_000);
  await send({ path: rebuildPath, expect: 200 });
  await send({ path: `/v1/processors/${rebuild.json.instance}/status`, expect: 200 });
  await send({ method: 'POST', path: `${rebuildPath}/promote`, body: { acceptDifferences: false }, expect: 200 });
  await send({ method: 'POST', path: `${rebuildPath}/rollback`, expect: 200 });
  await send({ path: '/admin/v1/processors/amm/rebuilds/rb-amm-9', expect: 404 });
  // Cancel and delete: a delete before the cancel 409; the cancel (twice), the delete's account of what it freed, then 404.
  await send({ method: 'DELETE', path: rebuildPath, expect: 409 });
  await send({ method: 'POST', path: `${rebuildPath}/cancel`, expect: 200 });
  await send({ method: 'POST', path: `${rebuildPath}/cancel`, expect: 200 });
  await send({ method: 'DELETE', path: rebuildPath, expect: 200 });
  await send({ method: 'DELETE', path: rebuildPath, expect: 404 });
  await send({ method: 'POST', path: '/admin/v1/processors/amm/rebuilds/rb-amm-9/cancel', expect: 404 });

  // Artifacts (erc20 and gas retain every finalized block's; gas-replay is gas's replay target; blobs keeps none).
  const artifacts = '/v1/processors/erc20/artifacts';
  const artifactStatus = await send({ path: `${artifacts}/status`, expect: 200 });
  const retained = artifactStatus.json.retained as { fromBlock: number; toBlock: number };
  await send({ path: '/v1/processors/blobs/artifacts/status', expect: 409 });
  await send({ path: '/v1/processors/nope/artifacts/status', expect: 404 });
  await send({ path: `${artifacts}/${retained.fromBlock + 1}`, expect: 200 });
  await send({ path: `${artifacts}/999999999`, expect: 404 });
  await send({ path: `${artifacts}/x`, expect: 400 });
  await send({ path: `${artifacts}/export?fromBlock=${retained.fromBlock}&toBlock=${retained.fromBlock + 3}&limit=2`, expect: 200 });
  await send({ path: `${artifacts}/export`, expect: 200 });
  await send({ path: `${artifacts}/export?fromBlock=5&toBlock=1`, expect: 400 });
  await send({ path: `${artifacts}/export?limit=100000000`, expect: 413 });
  await send({ path: '/v1/processors/blobs/artifacts/export', expect: 409 });
  await send({ path: '/v1/processors/gas/artifacts/2', expect: 200 });
  const replay = '/admin/v1/processors/gas/artifacts/replay';
  await send({ method: 'POST', path: replay, body: { targetProcessor: 'gas-replay', fromBlock: 1, toBlock: 3 }, expect: 200 });
  await send({ method: 'POST', path: replay, body: { targetProcessor: 'gas-replay', fromBlock: 999990, toBlock: 999999 }, expect: 409 });
  await send({ method: 'POST', path: replay, body: { targetProcessor: 'gasapp', fromBlock: 1, toBlock: 3 }, expect: 422 });
  await send({ method: 'POST', path: replay, body: { targetProcessor: 'gas-replay', fromBlock: 'one', toBlock: 1 }, expect: 400 });
  await send({ method: 'POST', path: replay, body: { targetProcessor: 'gas-replay', fromBlock: 0, toBlock: 1, limit: 100000000 }, expect: 413 });
  await send({ method: 'POST', path: replay, rawBody: '{}', headers: { 'content-type': 'text/plain' }, expect: 415 });
  await send({ method: 'POST', path: '/admin/v1/processors/nope/artifacts/replay', body: { targetProcessor: 'gas-replay', fromBlock: 0, toBlock: 1 }, expect: 404 });
  const pins = '/admin/v1/processors/erc20/artifacts/pins';
  await send({ method: 'POST', path: pins, body: { ownerId: 'walk', fromBlock: retained.fromBlock, toBlock: retained.fromBlock + 1 }, expect: 200 });
  await send({ method: 'POST', path: pins, body: { ownerId: '../x', fromBlock: 0, toBlock: 1 }, expect: 400 });
  await send({ method: 'POST', path: '/admin/v1/processors/blobs/artifacts/pins', body: { ownerId: 'walk', fromBlock: 0, toBlock: 1 }, expect: 409 });
  await send({ method: 'DELETE', path: `/admin/v1/processors/erc20/artifacts?ownerKind=operator_pin&ownerId=walk`, expect: 200 });
  await send({ method: 'DELETE', path: `/admin/v1/processors/erc20/artifacts?fromBlock=${retained.fromBlock}&toBlock=${retained.fromBlock}`, expect: 200 });
  await send({ method: 'DELETE', path: '/admin/v1/processors/erc20/artifacts?ownerKind=someone', expect: 400 });
  await send({ method: 'DELETE', path: '/admin/v1/processors/blobs/artifacts', expect: 409 });
  await send({ method: 'DELETE', path: '/admin/v1/processors/nope/artifacts', expect: 404 });

  assert.deepEqual(problems, [], 'every response is allowed by the document');
  const unexercised = validator.operationNames().filter((name) => !NO_LIVE_SUCCESS.has(name) && ![...(validator.exercised.get(name) ?? [])].some((status) => status.startsWith('2')));
  assert.deepEqual(unexercised, [], 'every documented operation was exercised with a success');
});

export type { NodeProcess };
