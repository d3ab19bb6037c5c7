/**
 * The relays' consumer records (net/jetstream/consumer-records.ts) against a real nats-server: two writers (two
 * connections, as two relays) racing on one record never lose each other's writes — every write is a compare-and-set
 * on the entry's revision, retried after re-reading — a deletion race has one winner, and a record survives the JSON
 * round trip (bigints, credential bytes).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { ConsumerRecords, decodeRecord, encodeRecord, recordKey } from '../../../net/jetstream/consumer-records.js';
import { acknowledged, delivered, newConsumerRecord } from '../../../store/consumer-transitions.js';
import type { LogBounds } from '../../../store/consumers.js';
import { hashCredential } from '../../../store/credential-hash.js';
import { startNatsServer } from '../../support/nats-server.js';

const BOUNDS: LogBounds = { head: 1000n, logged: 1000n, tail: 1n };
const cursorAt = (sequence: bigint) => `cursor-${sequence}`;

test('two writers racing on one consumer record: no delivery, acknowledgement or deletion is lost', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const open = async () => {
    const nc = await connect({ servers: server.url });
    t.after(() => nc.close());
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    return { jsm, records: await ConsumerRecords.open(js, jsm, 'RECORDS', 1, 'T') };
  };
  const a = await open();
  await a.jsm.streams.add({ name: 'T', subjects: ['t.>'] });
  const b = await open();

  const credential = await hashCredential('a-credential-of-some-length');
  const record = newConsumerRecord({ instance: 'i', processor: 'p', id: 'c', role: 'required', leaseTtlSeconds: 600, credential, start: { position: 'earliest_retained' } }, BOUNDS, cursorAt, Date.now());
  assert.equal(await a.records.create(record, 't.i'), true);
  assert.equal(await b.records.create(record, 't.i'), false, 'a second create finds it');

  // 2 × 20 deliveries of one change each, all at once: each hands out its own change.
  const deliveries = await Promise.all(Array.from({ length: 40 }, (_, n) => (n % 2 === 0 ? a : b).records.update('i', 'c', (current) => {
    const batch = delivered(current, BOUNDS, 1, cursorAt);
    return { write: batch.record, answer: batch.through };
  })));
  assert.deepEqual(deliveries.map(Number).sort((x, y) => x - y), Array.from({ length: 40 }, (_, n) => n + 1));

  // Acknowledgements racing: the highest wins, whichever writer comes last.
  await Promise.all(Array.from({ length: 40 }, (_, n) => (n % 2 === 0 ? b : a).records.update('i', 'c', (current) => {
    const next = acknowledged(current, BigInt(n + 1), `cursor-${n + 1}`);
    return { write: next === current ? null : next, answer: null };
  })));
  const stored = (await a.records.get('i', 'c'))!.record;
  assert.deepEqual([stored.delivered, stored.acknowledged, stored.acknowledgedCursor], [40n, 40n, 'cursor-40']);

  // The JSON round trip keeps every field.
  assert.deepEqual(decodeRecord(Buffer.from(encodeRecord(stored))), stored);
  assert.equal(recordKey('i', 'c'), `${Buffer.from('i').toString('base64url')}.${Buffer.from('c').toString('base64url')}`);
  assert.deepEqual((await b.records.list('i')).map((r) => r.id), ['c']);

  // Deleting races too: exactly one writer deletes it.
  const removed = await Promise.all([a.records.remove('i', 'c'), b.records.remove('i', 'c')]);
  assert.deepEqual(removed.sort(), [false, true]);
  assert.equal(await a.records.get('i', 'c'), undefined);
});
