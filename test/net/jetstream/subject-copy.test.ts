/**
 * A relay's copy of one subject (net/jetstream/subject-copy.ts) against a real nats-server: reads in sequence
 * order, eviction under the byte budget and fetching again by stream sequence, reset markers and a break in the
 * sequence starting a new run, an epoch change, and trimming what the stream removed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, headers } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { encodeCursor } from '../../../store/cursor.js';
import { ChangeCache, SubjectCopy } from '../../../net/jetstream/subject-copy.js';
import { HEADER_COMMITTED_AT, HEADER_FIRST, HEADER_LAST, HEADER_RESET, HEADER_STORE } from '../../../net/jetstream/fenced-publisher.js';
import { startNatsServer } from '../../support/nats-server.js';

const STREAM = 'COPYTEST';
const SUBJECT = 'copy.x';
const HASH = `0x${'ab'.repeat(32)}` as const;

/** A publication payload (docs/jetstream.md "Messages") of changes first..last of block `block`. */
function payload(epoch: bigint, first: number, last: number, block: number): Buffer {
  const parts: Buffer[] = [];
  for (let sequence = first; sequence <= last; sequence += 1) {
    const cursor = encodeCursor({ epoch, chainId: 1337, instance: 'x', sequence: BigInt(sequence), block: { number: block, hash: HASH } });
    const json = Buffer.from(JSON.stringify({ sequence: String(sequence), cursor, pad: 'x'.repeat(200) }));
    const head = Buffer.alloc(3);
    head[0] = 0;
    head.writeUInt16BE(cursor.length, 1);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(json.length, 0);
    parts.push(head, Buffer.from(cursor, 'latin1'), length, json);
  }
  return Buffer.concat(parts);
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('a subject copy reads in order, fetches evicted changes again, starts a new run at a reset, a gap or an epoch change, and trims what the stream removed', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const nc = await connect({ servers: server.url });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  await jsm.streams.add({ name: STREAM, subjects: ['copy.>'] });
  const publish = async (epoch: string, first: number, last: number, options: { reset?: string; committedAt?: number } = {}) => {
    const h = headers();
    h.set(HEADER_FIRST, String(first));
    h.set(HEADER_LAST, String(last));
    h.set(HEADER_STORE, epoch);
    if (options.reset) h.set(HEADER_RESET, options.reset);
    if (options.committedAt) h.set(HEADER_COMMITTED_AT, String(options.committedAt));
    const data = options.reset ? Buffer.alloc(0) : payload(BigInt(`0x${epoch}`), first, last, first);
    return (await js.publish(SUBJECT, data, { headers: h })).seq;
  };
  const A = '00000000000000aa';
  const B = '00000000000000bb';
  // Before the copy starts: two messages (changes 1..3 and 4..6).
  const firstSeq = await publish(A, 1, 3);
  await publish(A, 4, 6);

  const events = { appended: [] as Array<[bigint, number | null, boolean]>, loaded: 0, resets: [] as string[] };
  // A budget of two three-change messages (their payload and 64 bytes a change): a third evicts the least recently loaded.
  const messageBytes = payload(0xaan, 1, 3, 1).length + 3 * 64;
  const cache = new ChangeCache(2 * messageBytes + 100);
  const copy = new SubjectCopy(SUBJECT, STREAM, js, jsm, cache, {
    appended: (last, committedAt, live) => events.appended.push([last, committedAt, live]),
    loaded: () => { events.loaded += 1; },
    reset: (reason) => events.resets.push(reason),
  });
  t.after(() => copy.stop());
  await copy.start();
  await copy.whenCaughtUp();
  assert.equal(copy.epoch, A);
  assert.deepEqual(copy.bounds(), { head: 6n, tail: 1n });
  assert.deepEqual(events.appended.map(([last, , live]) => [last, live]), [[3n, false], [6n, false]]);
  assert.deepEqual(copy.read(0n, 10).map((c) => c.sequence), [1n, 2n, 3n, 4n, 5n, 6n]);
  assert.deepEqual(copy.read(2n, 3).map((c) => c.sequence), [3n, 4n, 5n]);
  assert.equal(copy.read(2n, 1)[0]!.cursor, encodeCursor({ epoch: 0xaan, chainId: 1337, instance: 'x', sequence: 3n, block: { number: 1, hash: HASH } }));

  // Live, with the commit time; the third message evicts the first.
  await publish(A, 7, 7, { committedAt: 1234 });
  await waitFor(() => copy.bounds().head === 7n, 'change 7');
  assert.deepEqual(events.appended.at(-1), [7n, 1234, true]);
  assert.ok(cache.bytes <= 2 * messageBytes + 100, `cache holds ${cache.bytes} bytes`);
  // A read stops before the evicted message (a prefix of 1..7, never a hole) and fetches it; `loaded` says when.
  const partial = copy.read(0n, 10).map((c) => c.sequence);
  assert.ok(partial.length < 7, `read ${partial.length} changes with a budget of two messages`);
  assert.deepEqual(partial, [1n, 2n, 3n, 4n, 5n, 6n, 7n].slice(0, partial.length));
  await waitFor(() => events.loaded > 0, 'the evicted message fetched again');
  await copy.prepare(0n, 3);
  assert.deepEqual(copy.read(0n, 3).map((c) => c.sequence), [1n, 2n, 3n]);
  await copy.prepare(3n, 4);
  assert.deepEqual(copy.read(3n, 4).map((c) => c.sequence), [4n, 5n, 6n, 7n]);

  // A retention-gap marker: the run starts again at 10; nothing is retained until 10 arrives.
  await publish(A, 10, 9, { reset: 'retention_gap' });
  await waitFor(() => events.resets.length === 1, 'the reset');
  assert.deepEqual(events.resets, ['retention_gap']);
  assert.deepEqual(copy.bounds(), { head: 9n, tail: null });
  await publish(A, 10, 11);
  await waitFor(() => copy.bounds().head === 11n, 'changes 10..11');
  assert.deepEqual(copy.bounds(), { head: 11n, tail: 10n });
  await copy.prepare(9n, 5);
  assert.deepEqual(copy.read(9n, 5).map((c) => c.sequence), [10n, 11n]);

  // A break in the sequence without a marker (13 after 11): a new run, as a gap.
  await publish(A, 13, 13);
  await waitFor(() => events.resets.length === 2, 'the gap');
  assert.deepEqual(copy.bounds(), { head: 13n, tail: 13n });

  // Another store epoch: a new run under it.
  await publish(B, 1, 2);
  await waitFor(() => events.resets.length === 3, 'the epoch change');
  assert.equal(events.resets[2], 'epoch_changed');
  assert.equal(copy.epoch, B);
  assert.deepEqual(copy.bounds(), { head: 2n, tail: 1n });

  // The stream removes the run's first message (as its limits would): trim drops it.
  const kept = await publish(B, 3, 4);
  await waitFor(() => copy.bounds().head === 4n, 'changes 3..4');
  await jsm.streams.purge(STREAM, { filter: SUBJECT, seq: kept });
  await copy.trim();
  assert.deepEqual(copy.bounds(), { head: 4n, tail: 3n });
  assert.ok(firstSeq >= 1);
});
