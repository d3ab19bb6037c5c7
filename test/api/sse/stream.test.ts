import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeCursor } from '../../../store/cursor.js';
import { BLOBS, getJson, startListener, type ErrorShape } from '../aggregate/listener-fixture.js';
import { appendChanges, blobsBlock, CHAIN_ID, pruneChanges, seedBlocks, type WrittenChange } from '../aggregate/store-fixture.js';
import { changeSequences, encodingRecorder, openRawStream, recordEventSource } from './sse-clients.js';
import { startTcpProxy } from './tcp-proxy.js';

const STREAM = '/v1/processors/blobs/stream';

const frameOf = (change: WrittenChange) => `id: ${change.cursor}\nevent: ${change.operation}\ndata: ${change.json}\n\n`;

interface Hello {
  apiVersion: string;
  chainId: number;
  processor: { id: string; instance: string; changeSchema: string };
  coverage: { available: Array<{ fromBlock: number; toBlock: number }> };
}

function splitHello(text: string): { hello: Hello; rest: string } {
  const match = /^event: hello\ndata: (.*)\n\n/.exec(text);
  assert.ok(match, `the stream opens with a hello frame without an id line: ${text.slice(0, 120)}`);
  return { hello: JSON.parse(match[1]!) as Hello, rest: text.slice(match[0].length) };
}

async function withLog(t: import('node:test').TestContext, count: number, overrides = {}) {
  let written: WrittenChange[] = [];
  const node = await startListener(t, async ({ store }) => {
    await seedBlocks(store, BLOBS.instance, [{ block: blobsBlock(1) }, { block: blobsBlock(2) }]);
    written = await appendChanges(store, BLOBS.instance, 0n, count);
  }, overrides);
  return { node, written };
}

test('hello opens the stream with no id, then the stored changes follow as exact frames in order', async (t) => {
  const { node, written } = await withLog(t, 12, { sse: { heartbeatSeconds: 30, maxBufferedBytes: 1 << 20, batchChanges: 5 } });
  const stream = await openRawStream(t, `${node.base}${STREAM}`);
  assert.equal(stream.status, 200);
  assert.equal(stream.headers.get('content-type'), 'text/event-stream');
  const expected = written.map(frameOf).join('');
  const { text } = await stream.readUntil((seen) => seen.endsWith(frameOf(written[11]!)));
  const { hello, rest } = splitHello(text);
  assert.equal(hello.apiVersion, '1');
  assert.equal(hello.chainId, CHAIN_ID);
  assert.deepEqual([hello.processor.id, hello.processor.instance, hello.processor.changeSchema], ['blobs', 'blobs@1', 'blobs.v1']);
  assert.deepEqual(hello.coverage.available.map((a) => [a.fromBlock, a.toBlock]), [[1, 2]]);
  assert.equal(rest, expected, 'frames are id/event/data of the stored bytes, across read batches, without gaps or repeats');
});

test('after resumes behind the given cursor; a ChangesNotice delivers newly committed changes live to every stream', async (t) => {
  const { node, written } = await withLog(t, 5);
  const clients = [0, 1, 2].map(() => recordEventSource(t, `${node.base}${STREAM}?after=${written[1]!.cursor}`));
  for (const client of clients) await client.waitFor((events) => changeSequences(events).length === 3);
  const more = await appendChanges(node.temp.store, BLOBS.instance, 5n, 4);
  await node.notify('blobs', 9n);
  for (const client of clients) {
    await client.waitFor((events) => changeSequences(events).length === 7);
    assert.equal(client.events[0]!.type, 'hello');
    assert.equal(client.events[0]!.lastEventId, '', 'hello carries no id');
    assert.deepEqual(changeSequences(client.events), ['3', '4', '5', '6', '7', '8', '9']);
    const changes = client.events.slice(1);
    assert.deepEqual(changes.map((e) => e.lastEventId), [...written.slice(2), ...more].map((c) => c.cursor), 'each frame id is its cursor');
    assert.deepEqual(changes.map((e) => e.type), [...written.slice(2), ...more].map((c) => c.operation), 'the event name is the operation');
  }
});

test('a notice carries its commit time: the listener times commit → notice and commit → each sampled stream write', async (t) => {
  const { node, written } = await withLog(t, 2);
  const clients = [0, 1, 2].map(() => recordEventSource(t, `${node.base}${STREAM}?after=${written[1]!.cursor}`));
  for (const client of clients) await client.waitFor((events) => events.some((e) => e.type === 'hello'));
  const count = (text: string, name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  const counts = async () => {
    const text = await node.metrics();
    return ['chain_node_sse_notice_delay_seconds_count', 'chain_node_sse_commit_to_write_seconds_count', 'chain_node_sse_events_total'].map((name) => count(text, name));
  };
  // A first change settles the streams at one position: the pass that follows a stream's join may
  // read a change committed before its notice arrives (it is delivered, but has no commit time to sample).
  await appendChanges(node.temp.store, BLOBS.instance, 2n, 1);
  await node.notify('blobs', 3n);
  for (const client of clients) await client.waitFor((events) => changeSequences(events).length === 1);
  const before = await counts();
  // Nothing wakes an idle, writable fan-out but a notice: this change is read by the pass its notice starts.
  await appendChanges(node.temp.store, BLOBS.instance, 3n, 1);
  await node.notify('blobs', 4n);
  for (const client of clients) await client.waitFor((events) => changeSequences(events).length === 2);
  const [notices, sampled, events] = (await counts()).map((value, i) => value - before[i]!);
  assert.equal(notices, 1, 'one notice handled');
  // Three streams in one group: the first (every 16th) and the last are sampled.
  assert.equal(sampled, 2);
  assert.equal(events, 3, 'one write per stream');
});

test('a dropped connection reconnects with Last-Event-ID and resumes with no gap and no repeat', async (t) => {
  const { node, written } = await withLog(t, 4);
  const proxy = await startTcpProxy(t, node.port);
  const recorder = encodingRecorder();
  const client = recordEventSource(t, `http://127.0.0.1:${proxy.port}${STREAM}?after=${written[0]!.cursor}`, { fetch: recorder.fetch });
  await client.waitFor((events) => changeSequences(events).length === 3);
  proxy.cut();
  const more = await appendChanges(node.temp.store, BLOBS.instance, 4n, 3);
  await node.notify('blobs', 7n);
  await client.waitFor((events) => changeSequences(events).length >= 6, 15_000);
  assert.ok(client.errors.length >= 1, 'the client saw the connection drop');
  assert.deepEqual(client.events.filter((e) => e.type === 'hello').length, 2, 'every connection opens with hello');
  assert.deepEqual(changeSequences(client.events), ['2', '3', '4', '5', '6', '7'], 'Last-Event-ID wins over the original after= on reconnect');
  assert.equal(client.events.at(-1)!.lastEventId, more[2]!.cursor);
  assert.deepEqual(recorder.encodings, ['gzip', 'gzip'], 'both connections were gzip-coded (the client asks for it)');
});

test('a cursor of another store epoch gets hello, one reset_required event without id carrying coverage, then the stream ends', async (t) => {
  const { node } = await withLog(t, 3);
  const foreign = encodeCursor({ epoch: node.temp.store.epoch ^ 0xffn, chainId: CHAIN_ID, instance: BLOBS.instance, sequence: 2n });
  const stream = await openRawStream(t, `${node.base}${STREAM}?after=${foreign}`);
  assert.equal(stream.status, 200);
  const { text, ended } = await stream.readUntil(() => false);
  assert.ok(ended, 'the server closes the stream after reset_required');
  const { rest } = splitHello(text);
  const match = /^event: reset_required\ndata: (.*)\n\n$/.exec(rest);
  assert.ok(match, `exactly one reset_required frame without id: ${rest}`);
  const envelope = JSON.parse(match[1]!) as { apiVersion: string; operation: string; cursor: unknown; sequence: string; chainId: number; coverage: { available: unknown[] }; data: { code: string } };
  assert.equal(envelope.apiVersion, '1');
  assert.equal(envelope.operation, 'reset_required');
  assert.equal(envelope.cursor, null, 'no position is substituted for the refused cursor');
  assert.equal(envelope.sequence, '3');
  assert.equal(envelope.chainId, CHAIN_ID);
  assert.deepEqual(envelope.coverage.available, [{ fromBlock: 1, toBlock: 2, finality: 'included' }]);
  assert.equal(envelope.data.code, 'reset_required');
  const client = recordEventSource(t, `${node.base}${STREAM}?after=${foreign}`);
  await client.waitFor((events) => events.some((e) => e.type === 'reset_required'));
  client.source.close();
});

test('an expired Last-Event-ID gets a terminal reset_required event; a damaged cursor is a 400 JSON error before streaming', async (t) => {
  const { node, written } = await withLog(t, 6);
  await pruneChanges(node.temp.store, BLOBS.instance, 4n);
  const stream = await openRawStream(t, `${node.base}${STREAM}`, { 'last-event-id': written[1]!.cursor });
  const { text, ended } = await stream.readUntil(() => false);
  assert.ok(ended);
  assert.match(splitHello(text).rest, /^event: reset_required\ndata: .*"code":"cursor_expired"/);
  const damaged: Array<[string, Record<string, string>]> = [
    [`${STREAM}?after=${written[0]!.cursor.slice(0, -3)}xyz`, {}],
    [STREAM, { 'last-event-id': 'garbage' }],
  ];
  for (const [path, headers] of damaged) {
    const { status, body } = await getJson<ErrorShape>(node.base, path, headers);
    assert.deepEqual([status, body.error.code], [400, 'cursor_invalid'], path);
  }
  const beyond = encodeCursor({ epoch: node.temp.store.epoch, chainId: CHAIN_ID, instance: BLOBS.instance, sequence: 99n });
  assert.equal((await fetch(`${node.base}${STREAM}?after=${beyond}`)).status, 400, 'a cursor beyond the head was never issued');
});

test('idle streams receive comment heartbeats', async (t) => {
  const { node } = await withLog(t, 1, { sse: { heartbeatSeconds: 1, maxBufferedBytes: 1 << 20, batchChanges: 64 } });
  const stream = await openRawStream(t, `${node.base}${STREAM}`);
  // The beat right after the stream was handed its change skips it (it was not idle); later ones do not.
  const { text } = await stream.readUntil((seen) => (seen.match(/^:heartbeat\n\n/gm) ?? []).length >= 2, 10_000);
  assert.ok(text.includes('event: apply'));
});

test('stopping the listener ends every open stream and drops its timers', async (t) => {
  const { node } = await withLog(t, 2, { sse: { heartbeatSeconds: 1, maxBufferedBytes: 1 << 20, batchChanges: 64 } });
  const streams = await Promise.all([0, 1, 2].map(() => openRawStream(t, `${node.base}${STREAM}`)));
  for (const stream of streams) await stream.readUntil((seen) => seen.includes('event: apply'));
  const stopped = node.system.stop();
  for (const stream of streams) assert.ok((await stream.readUntil(() => false, 5000)).ended, 'the stream ends when the listener stops');
  await stopped;
});

test('a stream opened before the processor wrote anything follows its first commits; stray notices are ignored', async (t) => {
  const node = await startListener(t, async () => {});
  const client = recordEventSource(t, `${node.base}${STREAM}`);
  await client.waitFor((events) => events.some((e) => e.type === 'hello'));
  await node.notify('not-configured', 1n);
  await seedBlocks(node.temp.store, BLOBS.instance, [{ block: blobsBlock(1) }]);
  const written = await appendChanges(node.temp.store, BLOBS.instance, 0n, 3);
  await node.notify('blobs', 3n);
  await client.waitFor((events) => changeSequences(events).length === 3);
  assert.deepEqual(client.events.slice(1).map((e) => e.lastEventId), written.map((c) => c.cursor));
  const status = await getJson<{ coverage: { available: unknown[] } }>(node.base, '/v1/processors/blobs/status');
  assert.deepEqual(status.body.coverage.available, [{ fromBlock: 1, toBlock: 1, finality: 'included' }], 'HTTP reads see the new tables too');
});
