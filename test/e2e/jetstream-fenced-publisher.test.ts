/**
 * Fenced publication (net/jetstream/fenced-publisher.ts, store/publication-messages.ts) against a real `nats-server`:
 * a change log published message by message, interrupted and resumed from the stream's last message, holds every
 * change exactly once, in order, byte-identical to the log; another store publishing the same instance is refused, a
 * store descending from the subject's epoch continues it after an `epoch_changed` reset marker; descriptors are put in
 * and read back from the descriptor KV bucket.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { ChangeGroupWriter } from '../../actors/processor/change-writer.js';
import { readChanges, type ChangeGroupHead } from '../../store/change-log.js';
import { openStore } from '../../store/store.js';
import { decodePublication, publicationMessages } from '../../store/publication-messages.js';
import { FencedPublisher, ForeignPublisherError, type PublisherOptions } from '../../net/jetstream/fenced-publisher.js';
import { Kvm } from '@nats-io/kv';
import { jetstream } from '@nats-io/jetstream';
import { DescriptorBucket, descriptorKey, type PublishedDescriptor } from '../../net/jetstream/descriptors.js';
import { describeCoverage, INITIAL_PROGRESS } from '../../store/coverage.js';
import { startNatsServer } from '../support/nats-server.js';
import { tempDir } from '../store/helpers/temp-dir.js';

const CHAIN_ID = 7;

test('a change log published in fenced messages, resumed after each interruption, holds every change once, in order, byte-identical', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const store = openStore({ dataDir: join(tempDir(t), 'data'), chainId: CHAIN_ID });
  t.after(() => store.close());
  const log = { changes: store.processor('app').changes, epoch: store.epoch, chainId: CHAIN_ID, instance: 'app' };
  await store.write(() => {
    const writer = new ChangeGroupWriter(log);
    let sequence = 0n;
    for (let number = 1; number <= 20; number += 1) {
      const head: ChangeGroupHead = { operation: number % 5 === 0 ? 'undo' : 'apply', finality: 'included', block: { number, hash: `0x${number.toString(16).padStart(64, 'a')}`, parentHash: `0x${(number - 1).toString(16).padStart(64, 'b')}`, timestamp: 1_700_000_000 + number }, schema: 'app.v1', emittedAt: '2026-01-01T00:00:00.000Z' };
      for (let i = 0; i < 30; i += 1) writer.add(++sequence, head, { kind: 'app.row.put', key: `k${number}-${i}`, dataJson: JSON.stringify({ v: 'é✓'.repeat(i) }) });
    }
    writer.flush();
  });
  const options: PublisherOptions = { servers: [server.url], stream: 'CHANGES', subjectPrefix: 'cdn.changes', replicas: 1, maxBytes: 0, maxMessagesPerSubject: -1, ackTimeoutMs: 5000, storeEpoch: store.epoch.toString(16), ancestorEpochs: [] };
  // Publisher lifetimes, each publishing a few messages and stopping; each resumes from what the stream holds.
  let lives = 0;
  for (let done = false; !done; lives += 1) {
    const publisher = await FencedPublisher.open(options);
    let at = await publisher.position('app');
    for (const message of publicationMessages(log, at.lastChange, 4096, 7)) at = await publisher.publish('app', at, message, message.last % 2n === 0n ? 1_700_000_000_123.7 : null);
    done = at.lastChange === 600n;
    await publisher.close();
  }
  assert.ok(lives > 3, `${lives} publisher lifetimes`);
  const nc = await connect({ servers: server.url });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const published = [];
  const last = (await jsm.streams.info('CHANGES')).state.last_seq;
  for (let seq = 1; seq <= last; seq += 1) {
    const message = await jsm.streams.getMessage('CHANGES', { seq });
    const lastChange = BigInt(message!.header.get('Chain-Node-Last-Sequence'));
    assert.equal(message!.header.get('Chain-Node-Committed-At'), lastChange % 2n === 0n ? '1700000000124' : '', 'the commit time rounded to whole ms, only when known');
    published.push(...decodePublication(BigInt(message!.header.get('Chain-Node-First-Sequence')), message!.data));
  }
  const stored = readChanges(log, 0n, 10_000);
  assert.equal(stored.length, 600);
  assert.equal(published.length, stored.length);
  assert.deepEqual(published.map((c) => [c.sequence, c.operation, c.cursor, c.json.toString('hex')]), stored.map((c) => [c.sequence, c.operation, c.cursor, c.json.toString('hex')]));
  // A repeat of a published message (as after a crash between publish and ack) is a duplicate: nothing appended, and
  // the publisher learns where the subject stands; a stale position with a new message is refused by the fence.
  const publisher = await FencedPublisher.open(options);
  t.after(() => publisher.close());
  const position = await publisher.position('app');
  assert.deepEqual(await publisher.publish('app', { subjectSequence: 1, lastChange: 0n }, publicationMessages(log, 0n, 4096, 1)[0]!, null), position);
  assert.equal((await jsm.streams.info('CHANGES')).state.last_seq, last);
  const next = { first: 601n, last: 601n, payload: Buffer.from('x') };
  await assert.rejects(publisher.publish('app', { subjectSequence: 1, lastChange: 0n }, next, null), /wrong last sequence/);
  // Another store (another epoch) publishing the same instance is refused.
  const other = await FencedPublisher.open({ ...options, storeEpoch: 'ffff' });
  t.after(() => other.close());
  await assert.rejects(other.position('app'), ForeignPublisherError);
});

test('a store descending from the subject\'s epoch continues it after an epoch_changed marker; an unrelated one stays refused', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const options: PublisherOptions = { servers: [server.url], stream: 'CHANGES', subjectPrefix: 'cdn', replicas: 1, maxBytes: 0, maxMessagesPerSubject: -1, ackTimeoutMs: 5000, storeEpoch: '3d989cee1b273ce7', ancestorEpochs: [] };
  const original = await FencedPublisher.open(options);
  t.after(() => original.close());
  let at = await original.position('app');
  at = await original.publish('app', at, { first: 1n, last: 3n, payload: Buffer.from('not decoded here') }, null);
  // The copy's meta records the original epoch zero-padded (store/meta.ts epochToHex); the header carries it unpadded.
  const copy = await FencedPublisher.open({ ...options, storeEpoch: 'abcdef', ancestorEpochs: ['00000000000000aa', '3d989cee1b273ce7'] });
  t.after(() => copy.close());
  const from = await copy.position('app');
  assert.deepEqual(from, { ...at, ancestorEpoch: '3d989cee1b273ce7' });
  const after = await copy.publishReset('app', from, 'epoch_changed', 2n);
  const nc = await connect({ servers: server.url });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const marker = (await jsm.streams.getMessage('CHANGES', { last_by_subj: 'cdn.app' }))!;
  assert.equal(marker.data.length, 0);
  assert.deepEqual(['Chain-Node-Reset', 'Chain-Node-First-Sequence', 'Chain-Node-Last-Sequence', 'Chain-Node-Store-Epoch', 'Nats-Msg-Id'].map((h) => marker.header.get(h)), ['epoch_changed', '2', '1', 'abcdef', 'abcdef:app:reset:2']);
  assert.deepEqual(await copy.position('app'), after);
  assert.deepEqual(after, { subjectSequence: at.subjectSequence + 1, lastChange: 1n });
  await assert.rejects(original.position('app'), ForeignPublisherError, 'the original does not descend from the copy');
  const stranger = await FencedPublisher.open({ ...options, storeEpoch: '1234', ancestorEpochs: ['3d989cee1b273ce7'] });
  t.after(() => stranger.close());
  await assert.rejects(stranger.position('app'), ForeignPublisherError, 'descending from an older epoch of the subject is not enough');
});

test('descriptors are put under the base64url processor id, in a bucket of history 1, and read back as put', async (t) => {
  const server = await startNatsServer();
  t.after(() => server.close());
  const nc = await connect({ servers: server.url });
  t.after(() => nc.close());
  const bucket = await DescriptorBucket.open(jetstream(nc), 'DESCRIPTORS', 1);
  const descriptor: PublishedDescriptor = {
    format: 1, chainId: CHAIN_ID, storeEpoch: 'ab', subject: 'cdn.pools+1',
    processor: { id: 'pools/ü', instance: 'pools+1', kind: 'amm', version: '1', changeSchema: 'amm.v1', genericApi: 'entities.v1', deliveryOrdering: 'block', output: 'entities', delivery: true },
    coverage: describeCoverage({ chainId: CHAIN_ID, ranges: [{ from: 1, to: 9 }], progress: { ...INITIAL_PROGRESS, state: 'live', changeSequence: 12n }, liveHeadBlock: 9, liveHeadHash: null, orderedState: false }),
    published: '12', updatedAt: '2026-11-28T20:00:00.000Z',
  };
  await bucket.put(descriptor);
  assert.equal(descriptorKey('pools/ü'), Buffer.from('pools/ü').toString('base64url'));
  assert.match(descriptorKey('pools/ü'), /^[A-Za-z0-9_-]+$/);
  const kv = await new Kvm(nc).open('DESCRIPTORS');
  assert.deepEqual((await kv.get(descriptorKey('pools/ü')))!.json(), JSON.parse(JSON.stringify(descriptor)));
  assert.equal(await kv.get(descriptorKey('other')), null);
  assert.equal((await kv.status()).history, 1);
});
