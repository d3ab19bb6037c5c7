import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { BLOBS, startListener, type RunningListener } from '../aggregate/listener-fixture.js';
import { appendChanges } from '../aggregate/store-fixture.js';
import { changeSequences, recordEventSource } from './sse-clients.js';

const STREAM = '/v1/processors/blobs/stream';
/** Each change carries ~100 KB, so a few dozen fill any loopback socket buffer. */
const PADDING = 100_000;

/** A raw HTTP client that sends the stream request and then never reads. */
async function neverReadingClient(t: TestContext, port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  t.after(() => socket.destroy());
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.pause();
  socket.write(`GET ${STREAM} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
  return socket;
}

/** Resumes reading and resolves with everything up to the server's close; rejects if it stays open. */
function readToClose(socket: Socket, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => reject(new Error(`the server kept the stream open after ${chunks.reduce((n, c) => n + c.length, 0)} bytes`)), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    socket.resume();
  });
}

async function metric(node: RunningListener, pattern: RegExp): Promise<number> {
  const match = pattern.exec(await node.metrics());
  return match ? Number(match[1]) : 0;
}

async function waitForMetric(node: RunningListener, pattern: RegExp, value: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await metric(node, pattern)) !== value) {
    if (Date.now() > deadline) throw new Error(`metric ${pattern} never reached ${value}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const OPEN_STREAMS = /^chain_node_sse_streams\{[^}]*\} (\d+)/m;
const STALLED_STREAMS = /^chain_node_sse_streams_stalled\{[^}]*\} (\d+)/m;
const SLOW_DROPS = /^chain_node_sse_streams_ended_total\{[^}]*how="slow_consumer"[^}]*\} (\d+)/m;
const ABORTED = /^chain_node_sse_streams_ended_total\{[^}]*how="aborted"[^}]*\} (\d+)/m;

test('a consumer that stops reading is disconnected once its buffer passes the bound, while a reading client keeps receiving', async (t) => {
  const node = await startListener(t, async () => {}, { sse: { heartbeatSeconds: 60, maxBufferedBytes: 512 * 1024, batchChanges: 4 } });
  const reader = recordEventSource(t, `${node.base}${STREAM}`);
  await reader.waitFor((events) => events.some((e) => e.type === 'hello'));
  const slow = await neverReadingClient(t, node.port);
  await waitForMetric(node, OPEN_STREAMS, 2);
  const total = 300;
  for (let from = 0; from < total; from += 50) {
    await appendChanges(node.temp.store, BLOBS.instance, BigInt(from), 50, PADDING);
    await node.notify('blobs', BigInt(from + 50));
  }
  await reader.waitFor((events) => changeSequences(events).length === total, 60_000);
  assert.deepEqual(changeSequences(reader.events), Array.from({ length: total }, (_, i) => String(i + 1)), 'the reading client got every change in order');
  await waitForMetric(node, SLOW_DROPS, 1);
  assert.equal(await metric(node, OPEN_STREAMS), 1);
  const received = await readToClose(slow, 10_000);
  assert.ok(received.length < total * PADDING, `the slow consumer got only part of the stream (${received.length} bytes) before the server closed it`);
  assert.ok(!received.subarray(-5).equals(Buffer.from('0\r\n\r\n')), 'closed abruptly, not ended as a complete response');
});

test('a lone consumer stalled for two heartbeat intervals is disconnected', async (t) => {
  const node = await startListener(t, async () => {}, { sse: { heartbeatSeconds: 1, maxBufferedBytes: 64 * 1024 * 1024, batchChanges: 64 } });
  const slow = await neverReadingClient(t, node.port);
  await waitForMetric(node, OPEN_STREAMS, 1);
  await appendChanges(node.temp.store, BLOBS.instance, 0n, 200, PADDING);
  await node.notify('blobs', 200n);
  await waitForMetric(node, SLOW_DROPS, 1, 10_000);
  assert.equal(await metric(node, OPEN_STREAMS), 0);
  const received = await readToClose(slow, 10_000);
  assert.ok(received.length < 200 * PADDING);
});

test('a consumer that pauses and then reads again gets every frame the server could not send at once, with no later change or heartbeat to push them', async (t) => {
  // One write of all the changes: the socket takes part of it, uWS keeps the rest, and then the
  // connection's JS queue is empty when the socket drains (nothing left to push that rest along).
  const node = await startListener(t, async () => {}, { sse: { heartbeatSeconds: 3600, maxBufferedBytes: 64 * 1024 * 1024, batchChanges: 512 } });
  const paused = await neverReadingClient(t, node.port);
  await waitForMetric(node, OPEN_STREAMS, 1);
  const total = 80;
  await appendChanges(node.temp.store, BLOBS.instance, 0n, total, PADDING);
  await node.notify('blobs', BigInt(total));
  // ~8 MB, more than the loopback socket buffers hold: the server's write is refused.
  await waitForMetric(node, STALLED_STREAMS, 1);
  const frames = new Set<string>();
  let pending = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${frames.size} of ${total} change frames arrived`)), 20_000);
    paused.setEncoding('latin1');
    paused.on('data', (text: string) => {
      const parts = (pending + text).split('\n\n');
      pending = parts.pop()!;
      // Only complete frames count: the tail of the last one is what a stuck write would hold back.
      // (The body is chunked: a chunk-size line may precede the first frame of each write.)
      for (const frame of parts) {
        const sequence = /(?:^|\n)id: .*\nevent: .*\ndata: \{"apiVersion":"1","sequence":"(\d+)"/.exec(frame)?.[1];
        if (sequence) frames.add(sequence);
      }
      if (frames.size === total) {
        clearTimeout(timer);
        resolve();
      }
    });
    paused.resume();
  });
  assert.equal(await metric(node, SLOW_DROPS), 0, 'not a slow consumer: it read everything');
});

test('the node\'s stall rule, not the web server\'s write timeout, closes a stalled stream, and counts it as a slow consumer', async (t) => {
  // uWS closes a response that makes no write progress for ~10 s; two heartbeat intervals here are 12 s.
  const node = await startListener(t, async () => {}, { sse: { heartbeatSeconds: 6, maxBufferedBytes: 64 * 1024 * 1024, batchChanges: 64 } });
  const slow = await neverReadingClient(t, node.port);
  await waitForMetric(node, OPEN_STREAMS, 1);
  await appendChanges(node.temp.store, BLOBS.instance, 0n, 200, PADDING);
  await node.notify('blobs', 200n);
  await waitForMetric(node, STALLED_STREAMS, 1);
  await waitForMetric(node, SLOW_DROPS, 1, 60_000);
  assert.equal(await metric(node, ABORTED), 0, 'not ended as aborted by the web server\'s timeout first');
  assert.equal(await metric(node, OPEN_STREAMS), 0);
  assert.equal(await metric(node, STALLED_STREAMS), 0);
  const received = await readToClose(slow, 10_000);
  assert.ok(received.length < 200 * PADDING);
});
