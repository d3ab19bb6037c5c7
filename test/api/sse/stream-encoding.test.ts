/**
 * Content coding of the stream route (api/sse/stream-route.ts, sse-encoding.ts): gzip where the
 * request accepts it, decoded by real clients as each burst arrives; the plain frames, byte for byte
 * and with the same headers, for a client that does not ask.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { constants, gunzipSync, inflateRawSync } from 'node:zlib';
import { encodeCursor } from '../../../store/cursor.js';
import { chromiumPage } from '../../support/chromium.js';
import { BLOBS, startListener } from '../aggregate/listener-fixture.js';
import { appendChanges, blobsBlock, CHAIN_ID, seedBlocks, type WrittenChange } from '../aggregate/store-fixture.js';
import { changeSequences, encodingRecorder, openNodeHttpStream, recordEventSource } from './sse-clients.js';

const STREAM = '/v1/processors/blobs/stream';

const frameOf = (change: WrittenChange) => `id: ${change.cursor}\nevent: ${change.operation}\ndata: ${change.json}\n\n`;
const HELLO = /^event: hello\ndata: .*\n\n/;

async function withLog(t: TestContext, count: number) {
  let written: WrittenChange[] = [];
  const node = await startListener(t, async ({ store }) => {
    await seedBlocks(store, BLOBS.instance, [{ block: blobsBlock(1) }, { block: blobsBlock(2) }]);
    written = await appendChanges(store, BLOBS.instance, 0n, count);
  });
  return { node, written };
}

/** The gzip body so far, inflated up to its last sync flush (no trailer needed). */
const inflatedSoFar = (body: Buffer) => (body.length <= 10 ? '' : inflateRawSync(body.subarray(10), { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8'));

test('a client without Accept-Encoding, or refusing gzip, gets the plain frames byte for byte with the headers it always had', async (t) => {
  const { node, written } = await withLog(t, 6);
  const expected = written.map(frameOf).join('');
  const asked: Array<Record<string, string>> = [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'gzip;q=0, br' }];
  for (const headers of asked) {
    const stream = await openNodeHttpStream(t, `${node.base}${STREAM}`, headers);
    assert.equal(stream.status, 200);
    assert.equal(stream.headers['content-encoding'], undefined, JSON.stringify(headers));
    assert.equal(stream.headers.vary, undefined);
    assert.equal(stream.headers['content-type'], 'text/event-stream');
    const { bytes } = await stream.readUntil((body) => body.toString('utf8').endsWith(frameOf(written[5]!)));
    const text = bytes.toString('utf8');
    assert.match(text, HELLO);
    assert.equal(text.replace(HELLO, ''), expected);
  }
});

test('gzip: one gzip member whose every burst decodes on arrival; ended by the listener, it inflates whole with a valid trailer and equals the plain stream', async (t) => {
  const { node, written } = await withLog(t, 3);
  const gzip = await openNodeHttpStream(t, `${node.base}${STREAM}`, { 'accept-encoding': 'gzip, deflate, br' });
  const plain = await openNodeHttpStream(t, `${node.base}${STREAM}`);
  assert.equal(gzip.headers['content-encoding'], 'gzip');
  assert.equal(gzip.headers.vary, 'accept-encoding');
  assert.equal(gzip.headers['content-type'], 'text/event-stream');
  let all = [...written];
  await gzip.readUntil((body) => inflatedSoFar(body).endsWith(frameOf(all.at(-1)!)));
  // Each later block: nothing else is written (heartbeats every 30 s), so what the client decodes it decoded from that burst alone.
  for (const [after, count] of [[3n, 5], [8n, 1], [9n, 40]] as const) {
    const more = await appendChanges(node.temp.store, BLOBS.instance, after, count);
    all = [...all, ...more];
    await node.notify('blobs', after + BigInt(count));
    await gzip.readUntil((body) => inflatedSoFar(body).endsWith(frameOf(all.at(-1)!)), 10_000);
  }
  await plain.readUntil((body) => body.toString('utf8').endsWith(frameOf(all.at(-1)!)));
  const stopped = node.system.stop();
  const [gzipEnd, plainEnd] = [await gzip.readUntil(() => false, 5000), await plain.readUntil(() => false, 5000)];
  await stopped;
  assert.ok(gzipEnd.ended && plainEnd.ended);
  const decoded = gunzipSync(gzipEnd.bytes).toString('utf8'); // throws on a bad CRC or length
  assert.equal(decoded.replace(HELLO, ''), all.map(frameOf).join(''));
  assert.equal(decoded.replace(HELLO, ''), plainEnd.bytes.toString('utf8').replace(HELLO, ''), 'gzip decodes to the plain stream');
  assert.ok(gzipEnd.bytes.length < plainEnd.bytes.length, `${gzipEnd.bytes.length} gzip bytes < ${plainEnd.bytes.length} plain`);
});

test('gzip: a terminal reset_required closes the gzip member properly', async (t) => {
  const { node } = await withLog(t, 3);
  const foreign = encodeCursor({ epoch: node.temp.store.epoch ^ 0xffn, chainId: CHAIN_ID, instance: BLOBS.instance, sequence: 2n });
  const stream = await openNodeHttpStream(t, `${node.base}${STREAM}?after=${foreign}`, { 'accept-encoding': 'gzip' });
  assert.equal(stream.headers['content-encoding'], 'gzip');
  const { bytes, ended } = await stream.readUntil(() => false);
  assert.ok(ended);
  assert.match(gunzipSync(bytes).toString('utf8').replace(HELLO, ''), /^event: reset_required\ndata: \{.*"code":"reset_required".*\}\n\n$/);
});

test('the eventsource client over gzip: every change of each block as it is committed, in order, with its cursor as id', async (t) => {
  const { node, written } = await withLog(t, 2);
  const recorder = encodingRecorder();
  const client = recordEventSource(t, `${node.base}${STREAM}?after=${written[1]!.cursor}`, { fetch: recorder.fetch });
  await client.waitFor((events) => events.some((e) => e.type === 'hello'));
  let all: WrittenChange[] = [];
  let head = 2n;
  for (const count of [7, 1, 25]) {
    const more = await appendChanges(node.temp.store, BLOBS.instance, head, count);
    head += BigInt(count);
    all = [...all, ...more];
    await node.notify('blobs', head);
    // Held nowhere: the block's events are out before anything else is written to the stream.
    await client.waitFor((events) => changeSequences(events).length === all.length, 10_000);
  }
  assert.deepEqual(recorder.encodings, ['gzip'], 'the stream was gzip-coded');
  const changes = client.events.filter((e) => e.type !== 'hello');
  assert.deepEqual(changes.map((e) => e.lastEventId), all.map((c) => c.cursor));
  assert.deepEqual(changes.map((e) => e.type), all.map((c) => c.operation));
  assert.deepEqual(changes.map((e) => e.data), all.map((c) => c.json));
});

test("headless Chromium's EventSource over gzip dispatches each block's events when its burst arrives, with nothing written after it", async (t) => {
  const { node, written } = await withLog(t, 2);
  const page = await chromiumPage(t, `${node.base}/v1/status`, { width: 800, height: 600 });
  if (!page) return;
  const encodings: Array<string | undefined> = [];
  page.on('response', (response) => {
    if (response.url().includes(STREAM)) encodings.push(response.headers()['content-encoding']);
  });
  await page.evaluate((url) => {
    const state = { hello: false, ids: [] as string[] };
    (globalThis as unknown as { state: typeof state }).state = state;
    const source = new EventSource(url);
    source.addEventListener('hello', () => { state.hello = true; });
    for (const type of ['apply', 'undo', 'finalized']) source.addEventListener(type, (event) => state.ids.push((event as MessageEvent).lastEventId));
  }, `${node.base}${STREAM}?after=${written[1]!.cursor}`);
  const seen = () => page.evaluate(() => (globalThis as unknown as { state: { hello: boolean; ids: string[] } }).state);
  const waitFor = async (check: (state: { hello: boolean; ids: string[] }) => boolean) => {
    const deadline = Date.now() + 15_000;
    while (!check(await seen())) {
      if (Date.now() > deadline) throw new Error(`Chromium did not get there: ${JSON.stringify(await seen())}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  await waitFor((state) => state.hello);
  let all: WrittenChange[] = [];
  let head = 2n;
  for (const count of [12, 1, 30]) {
    const more = await appendChanges(node.temp.store, BLOBS.instance, head, count);
    head += BigInt(count);
    all = [...all, ...more];
    await node.notify('blobs', head);
    await waitFor((state) => state.ids.length === all.length);
  }
  assert.deepEqual((await seen()).ids, all.map((c) => c.cursor));
  assert.deepEqual(encodings, ['gzip']);
});
