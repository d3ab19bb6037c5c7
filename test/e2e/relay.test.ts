/**
 * `chain-node relay` through real processes (issue 30 point 4): a devnet node publishing to a real nats-server, and
 * a relay with no store serving the delivery routes from the stream. Pages, the change head and SSE frames are the
 * node's own bytes; a cursor minted by either works at the other; a cursor of another store epoch is
 * `reset_required`, one below what the stream retains `cursor_expired` (410, and as a terminal event on a stream);
 * bad input answers in the error shape, never 5xx; every answer validates against api/openapi.yaml. (A relay with
 * `auth.token_file`: test/e2e/auth.test.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { encodeCursor } from '../../store/cursor.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { startNatsServer } from '../support/nats-server.js';
import { relayJetstreamToml, startRelayProcess, type RelayProcess } from '../support/relay-process.js';
import { OpenApiValidator } from '../support/openapi-validator.js';
import { PROJECT_ROOT } from '../support/paths.js';
import { openRawStream } from '../api/sse/sse-clients.js';

const FAST = ['devnet.block_time_ms=100', 'devnet.reorg_every=8', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'runtime.pool_threads=1'];
const STREAM = 'CHANGES';
const PREFIX = 'cdn';

/** The example configuration (blobs, erc20, amm with delivery; an erc20 replay target without) publishing to `server`. */
function nodeToml(server: string): string {
  const example = readFileSync(join(PROJECT_ROOT, 'config.example.toml'), 'utf8').replace(/^\[delivery\.jetstream\][\s\S]*?(?=^\[chain\])/m, '');
  return `${example}\n[delivery.jetstream]\nenabled = true\nservers = ["${server}"]\nstream = "${STREAM}"\nsubject_prefix = "${PREFIX}"\n`;
}

/** The raw bytes of a page's `data` array: the envelopes exactly as served. */
function dataBytes(page: string): string {
  const start = page.indexOf('[');
  const end = page.lastIndexOf('],"nextCursor"');
  assert.ok(start > 0 && end > start, `not a page: ${page.slice(0, 200)}`);
  return page.slice(start, end + 1);
}

async function page(base: string, processor: string, after: string | null, limit: number, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(`${base}/v1/processors/${processor}/changes?limit=${limit}${after ? `&after=${after}` : ''}`, { headers });
  return { status: response.status, text: await response.text() };
}

async function relayHead(relay: RelayProcess, processor: string): Promise<bigint> {
  const response = await fetch(`${relay.baseUrl}/v1/processors/${processor}/changes/head`);
  return response.status === 200 ? BigInt(((await response.json()) as { sequence: string }).sequence) : -1n;
}

test('a relay serves the node\'s pages, head and stream byte for byte from JetStream; cursors cross; resets and expiry answer as the node does', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const node = await startNodeProcess({ toml: nodeToml(server.url), sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  const relay = await startRelayProcess({ toml: relayJetstreamToml([server.url], STREAM, PREFIX), sets: ['sse.heartbeat_seconds=1'] });
  t.after(() => relay.stop('SIGKILL'));

  // Enough published to see reorg undo envelopes and finalized markers among them.
  await waitUntil(node, async () => (await relayHead(relay, 'blobs')) >= 60n && (await relayHead(relay, 'erc20')) >= 400n, 90_000);
  const validator = new OpenApiValidator();

  for (const processor of ['blobs', 'erc20', 'amm']) {
    const head = await relayHead(relay, processor);
    let after: string | null = null;
    let read = 0n;
    const operations = new Set<string>();
    while (read < head) {
      const limit = 97;
      const fromRelay = await page(relay.baseUrl, processor, after, limit);
      const fromNode = await page(node.baseUrl, processor, after, limit);
      assert.equal(fromRelay.status, 200, fromRelay.text);
      assert.deepEqual(validator.check('GET', `/v1/processors/${processor}/changes`, 200, 'application/json', fromRelay.text).problems, []);
      const relayData = dataBytes(fromRelay.text);
      const body = JSON.parse(fromRelay.text) as { data: Array<{ cursor: string; operation: string }>; nextCursor: string | null };
      // The node may hold more than the relay copied so far: compare what the relay served.
      assert.equal(dataBytes(fromNode.text).slice(0, relayData.length - 1), relayData.slice(0, -1), `${processor} page after ${after}`);
      for (const envelope of body.data) operations.add(envelope.operation);
      read += BigInt(body.data.length);
      if (body.data.length === 0) break;
      after = body.data[body.data.length - 1]!.cursor;
    }
    assert.ok(read >= head, `${processor}: read ${read} of ${head}`);
    if (processor === 'erc20') assert.ok(operations.has('undo') && operations.has('finalized'), `operations seen: ${[...operations].join(', ')}`);
  }

  // The head: its cursor is the node's cursor of that change.
  const headBody = await (await fetch(`${relay.baseUrl}/v1/processors/blobs/changes/head`)).text();
  assert.deepEqual(validator.check('GET', '/v1/processors/blobs/changes/head', 200, 'application/json', headBody).problems, []);
  const head = JSON.parse(headBody) as { sequence: string; cursor: string };
  const before = JSON.parse((await page(node.baseUrl, 'blobs', null, 1000)).text) as { data: Array<{ sequence: string; cursor: string }> };
  assert.equal(before.data.find((e) => e.sequence === head.sequence)?.cursor, head.cursor);

  // Cursors cross: the node's cursor resumes at the relay and the relay's at the node, with the same next changes.
  const nodeCursor = before.data[10]!.cursor;
  const atRelay = dataBytes((await page(relay.baseUrl, 'blobs', nodeCursor, 5)).text);
  assert.equal(atRelay, dataBytes((await page(node.baseUrl, 'blobs', nodeCursor, 5)).text));
  const relayCursor = (JSON.parse((await page(relay.baseUrl, 'blobs', null, 20)).text) as { data: Array<{ cursor: string }> }).data[19]!.cursor;
  assert.equal(dataBytes((await page(node.baseUrl, 'blobs', relayCursor, 5)).text), dataBytes((await page(relay.baseUrl, 'blobs', relayCursor, 5)).text));

  // The stream: hello, then the same `id:`/data frames as the node's stream from the same cursor.
  const fromCursor = before.data[5]!.cursor;
  const frames = async (base: string) => {
    const stream = await openRawStream(t, `${base}/v1/processors/blobs/stream?after=${fromCursor}`);
    assert.equal(stream.status, 200);
    const { text } = await stream.readUntil((seen) => (seen.match(/^id: /gm) ?? []).length >= 30);
    stream.close();
    assert.match(text, /^event: hello\n/);
    return text.split('\n\n').filter((frame) => frame.startsWith('id: ')).slice(0, 30);
  };
  assert.deepEqual(await frames(relay.baseUrl), await frames(node.baseUrl));

  // Last-Event-ID wins over `after`, as at the node.
  const resumed = await openRawStream(t, `${relay.baseUrl}/v1/processors/blobs/stream?after=${fromCursor}`, { 'last-event-id': before.data[8]!.cursor });
  const { text: resumedText } = await resumed.readUntil((seen) => /^id: /m.test(seen));
  resumed.close();
  assert.match(resumedText, new RegExp(`^id: ${before.data[9]!.cursor}$`, 'm'));

  // A cursor of another store epoch: reset_required (410), and as the terminal event of a stream.
  const epoch = BigInt(`0x${((await (await fetch(`${node.baseUrl}/health/live`)).json()) as { store: { epoch: string } }).store.epoch}`);
  const foreign = encodeCursor({ epoch: epoch ^ 1n, chainId: 1337, instance: 'blobs', sequence: 3n });
  const reset = await page(relay.baseUrl, 'blobs', foreign, 10);
  assert.equal(reset.status, 410);
  assert.equal((JSON.parse(reset.text) as { error: { code: string } }).error.code, 'reset_required');
  assert.deepEqual(validator.check('GET', '/v1/processors/blobs/changes', 410, 'application/json', reset.text).problems, []);
  const resetStream = await openRawStream(t, `${relay.baseUrl}/v1/processors/blobs/stream?after=${foreign}`);
  const resetEnd = await resetStream.readUntil(() => false, 10_000);
  assert.ok(resetEnd.ended);
  assert.match(resetEnd.text, /^event: hello\n[\s\S]*\n\nevent: reset_required\ndata: .*"code":"reset_required"/);

  // Below what the stream retains: the subject's first messages purged; once the relay notices, cursor_expired.
  const nc = await connect({ servers: server.url });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const firstKept = (await jsm.streams.info(STREAM)).state.first_seq;
  await jsm.streams.purge(STREAM, { filter: `${PREFIX}.blobs`, seq: firstKept + 40 });
  const early = before.data[0]!.cursor;
  await waitUntil(node, async () => (await page(relay.baseUrl, 'blobs', early, 10)).status === 410, 30_000);
  const expired = JSON.parse((await page(relay.baseUrl, 'blobs', early, 10)).text) as { error: { code: string } };
  assert.equal(expired.error.code, 'cursor_expired');
  const expiredStream = await openRawStream(t, `${relay.baseUrl}/v1/processors/blobs/stream?after=${early}`);
  const expiredEnd = await expiredStream.readUntil(() => false, 10_000);
  assert.match(expiredEnd.text, /event: reset_required\ndata: .*"code":"cursor_expired"/);

  // Bad input: the spec's error shape, the right status, never 5xx.
  const bad: Array<[string, number, string]> = [
    ['/v1/processors/nope/changes', 404, 'not_found'],
    ['/v1/processors/blobs/changes?after=zzz', 400, 'cursor_invalid'],
    ['/v1/processors/blobs/changes?limit=0', 400, 'invalid_request'],
    ['/v1/processors/blobs/changes?limit=100000', 413, 'query_too_expensive'],
    ['/v1/processors/nope/stream', 404, 'not_found'],
    ['/v1/processors/%ZZ/stream', 400, 'invalid_request'],
    ['/v1/status', 404, 'not_found'],
  ];
  for (const [path, status, code] of bad) {
    const response = await fetch(`${relay.baseUrl}${path}`);
    const text = await response.text();
    assert.equal(response.status, status, `${path}: ${text}`);
    assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, code, path);
  }
  assert.equal((await fetch(`${relay.baseUrl}/v1/processors/blobs/changes`, { method: 'POST' })).status, 405);
});
