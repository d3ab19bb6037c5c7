/**
 * Durable consumers on relays (issue 30 point 4), through real processes: a devnet node publishing to a real
 * nats-server and two relays. A consumer created through relay A reads batches byte-identical to the node's own
 * `/changes`, acknowledges, and continues through relay B from its acknowledged watermark; redelivery after
 * `lease {redeliver: true}`; the credential rules (401 without, 403 with another's), 404 for an unknown consumer,
 * 400 for bad bodies, in the error shape; its JetStream durable consumer follows the acknowledged watermark; deleted
 * through B, it is gone through A. Two acknowledgements racing through both relays both take effect (compare-and-set).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { durableName } from '../../net/jetstream/consumer-records.js';
import { removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';
import { startNatsServer } from '../support/nats-server.js';
import { relayJetstreamToml, startRelayProcess, type RelayProcess } from '../support/relay-process.js';

const STREAM = 'CHANGES';
const PREFIX = 'cdn';
const CREDENTIAL = 'relay-consumer-credential-0001';
const FAST = ['devnet.block_time_ms=100', 'runtime.pool_threads=1'];

interface Envelope { sequence: string; cursor: string }

/** The raw bytes of a page's `data` array. */
function dataBytes(page: string): string {
  return page.slice(page.indexOf('['), page.lastIndexOf('],"nextCursor"') + 1);
}

async function call(relay: RelayProcess, method: string, path: string, body?: unknown, credential: string | null = CREDENTIAL): Promise<{ status: number; text: string; json: any }> {
  const headers: Record<string, string> = {};
  if (credential !== null) headers['x-node-consumer-credential'] = credential;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${relay.baseUrl}/v1/processors/blobs/consumers${path}`, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, text, json: text === '' ? null : JSON.parse(text) };
}

test('a durable consumer created through one relay continues through another from its acknowledged watermark, byte for byte as the node serves', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const node = await startNodeProcess({ toml: `[delivery.jetstream]\nenabled = true\nservers = ["${server.url}"]\nstream = "${STREAM}"\nsubject_prefix = "${PREFIX}"\n`, sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  const [a, b] = [
    await startRelayProcess({ dir: node.dir, toml: relayJetstreamToml([server.url], STREAM, PREFIX) }),
    await startRelayProcess({ dir: node.dir, toml: relayJetstreamToml([server.url], STREAM, PREFIX) }),
  ];
  t.after(() => Promise.all([a.stop('SIGKILL'), b.stop('SIGKILL')]));
  await waitUntil(node, async () => Number(((await (await fetch(`${a.baseUrl}/v1/processors/blobs/changes/head`)).json()) as { sequence: string }).sequence) >= 40, 60_000);

  // Bad input and unknown consumers, in the error shape.
  assert.equal((await call(a, 'POST', '', '{', null)).status, 400);
  const badBody = await call(a, 'POST', '', { id: 'c1', role: 'sometimes', start: { position: 'earliest_retained' }, leaseTtlSeconds: 60, credential: CREDENTIAL }, null);
  assert.deepEqual([badBody.status, badBody.json.error.code], [400, 'invalid_request']);
  const unknown = await call(a, 'GET', '/nope/changes');
  assert.deepEqual([unknown.status, unknown.json.error.code], [404, 'not_found']);

  // Created through A, from the earliest retained change.
  const created = await call(a, 'POST', '', { id: 'c1', role: 'required', start: { position: 'earliest_retained' }, leaseTtlSeconds: 60, credential: CREDENTIAL }, null);
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.credential, undefined, 'the credential is never echoed');
  assert.equal((await call(a, 'POST', '', { id: 'c1', role: 'required', start: { position: 'earliest_retained' }, leaseTtlSeconds: 60, credential: CREDENTIAL }, null)).status, 409);
  assert.deepEqual([(await call(a, 'GET', '/c1/changes', undefined, null)).status], [401]);
  const wrong = await call(a, 'GET', '/c1/changes', undefined, 'another-consumers-credential-01');
  assert.deepEqual([wrong.status, wrong.json.error.code], [403, 'forbidden']);

  // A batch through A: the node's own bytes for the same sequences.
  const first = await call(a, 'GET', '/c1/changes?limit=10');
  assert.equal(first.status, 200, first.text);
  const firstData = first.json.data as Envelope[];
  assert.deepEqual(firstData.map((e) => e.sequence), Array.from({ length: 10 }, (_, i) => String(i + 1)));
  const nodePage = await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=10`)).text();
  assert.equal(dataBytes(first.text), dataBytes(nodePage));
  // Acknowledge the first 6 through A; the next batch through B starts after the delivered 10 (the lease is live).
  const ack = await call(a, 'POST', '/c1/ack', { cursor: firstData[5]!.cursor });
  assert.equal(ack.status, 200, ack.text);
  assert.deepEqual([ack.json.acknowledged.sequence, ack.json.delivered.sequence], ['6', '10']);
  const next = await call(b, 'GET', '/c1/changes?limit=5');
  assert.equal(next.status, 200, next.text);
  assert.deepEqual((next.json.data as Envelope[]).map((e) => e.sequence), ['11', '12', '13', '14', '15']);
  // Redelivery through B: back to the acknowledged 6.
  assert.equal((await call(b, 'POST', '/c1/lease', { redeliver: true })).status, 200);
  const again = await call(b, 'GET', '/c1/changes?limit=4');
  assert.deepEqual((again.json.data as Envelope[]).map((e) => e.sequence), ['7', '8', '9', '10']);
  assert.equal(dataBytes(again.text), dataBytes(await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=4&after=${firstData[5]!.cursor}`)).text()));
  // An acknowledgement past what was delivered (10) is refused.
  const farCursor = (JSON.parse(await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=30`)).text()).data as Envelope[])[29]!.cursor;
  const beyond = await call(a, 'POST', '/c1/ack', { cursor: farCursor });
  assert.deepEqual([beyond.status, beyond.json.error.code], [400, 'cursor_invalid']);
  const more = await call(a, 'GET', '/c1/changes?limit=20');
  const moreData = more.json.data as Envelope[];
  // Two acknowledgements racing through both relays: the higher one wins, neither is lost.
  await Promise.all([call(a, 'POST', '/c1/ack', { cursor: moreData[3]!.cursor }), call(b, 'POST', '/c1/ack', { cursor: moreData[9]!.cursor })]);
  const listed = await call(b, 'GET', '', undefined, null);
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.json.data.map((c: { id: string }) => c.id), ['c1']);
  const viewed = await call(b, 'GET', '/c1');
  assert.equal(viewed.json.acknowledged.sequence, moreData[9]!.sequence, JSON.stringify(viewed.json));

  // The JetStream durable consumer follows the acknowledged watermark.
  const nc = await connect({ servers: server.url });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  await waitUntil(node, async () => (await jsm.consumers.info(STREAM, durableName('blobs', 'c1'))).ack_floor.stream_seq > 0, 30_000);

  // Deleted through B: gone through A, and its durable consumer with it.
  assert.equal((await call(b, 'DELETE', '/c1', undefined, null)).status, 204);
  assert.equal((await call(a, 'GET', '/c1')).status, 404);
  await assert.rejects(jsm.consumers.info(STREAM, durableName('blobs', 'c1')));
});
