/**
 * Fenced publication (net/jetstream/fenced-publisher.ts, store/publication-messages.ts) against a real `nats-server`:
 * a change log published message by message, interrupted and resumed from the stream's last message, holds every
 * change exactly once, in order, byte-identical to the log; another store publishing the same instance is refused.
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
  const options: PublisherOptions = { servers: [server.url], stream: 'CHANGES', subjectPrefix: 'cdn.changes', replicas: 1, maxBytes: 0, maxMessagesPerSubject: -1, ackTimeoutMs: 5000, storeEpoch: store.epoch.toString(16) };
  // Publisher lifetimes, each publishing a few messages and stopping; each resumes from what the stream holds.
  let lives = 0;
  for (let done = false; !done; lives += 1) {
    const publisher = await FencedPublisher.open(options);
    let at = await publisher.position('app');
    for (const message of publicationMessages(log, at.lastChange, 4096, 7)) at = await publisher.publish('app', at, message);
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
  assert.deepEqual(await publisher.publish('app', { subjectSequence: 1, lastChange: 0n }, publicationMessages(log, 0n, 4096, 1)[0]!), position);
  assert.equal((await jsm.streams.info('CHANGES')).state.last_seq, last);
  const next = { first: 601n, last: 601n, payload: Buffer.from('x') };
  await assert.rejects(publisher.publish('app', { subjectSequence: 1, lastChange: 0n }, next), /wrong last sequence/);
  // Another store (another epoch) publishing the same instance is refused.
  const other = await FencedPublisher.open({ ...options, storeEpoch: 'ffff' });
  t.after(() => other.close());
  await assert.rejects(other.position('app'), ForeignPublisherError);
});
