import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore, type Store } from '../../store/store.js';
import {
  createSubscription, deleteSubscription, dropOrphanStreams, migrateOwnStreamTables, listBindings, listSubscriptions, ownedCountThrough, ownedRunsAfter, readSubscription, streamInstance,
  streamProgress, subscriptionBinding, subscriptionIdForKey, SubscriptionConflict, SUBSCRIPTION_ID, updateSubscription, type BackfillSubscription,
} from '../../store/backfill-subscriptions.js';
import { consumerKey, readConsumer, type ConsumerRecord } from '../../store/consumers.js';
import { readProgress, writeProgress } from '../../store/coverage.js';
import { u64Key } from '../../store/keys.js';
import { assertProcessorInstanceId, PROCESSOR_TABLE_KINDS } from '../../store/tables.js';
import { MAX_TABLES, openTable } from '../../store/store.js';
import { ownerRange } from '../../store/keyed-table.js';
import { changeHead } from '../../store/change-log.js';
import { processorTableSpec } from '../../store/tables.js';
import { dbVerify } from '../../store/commands.js';
import { tempDir } from './helpers/temp-dir.js';

const ID = 'bs-0000018f0000-0a0b0c0d';

function record(id: string, overrides: Partial<BackfillSubscription> = {}): BackfillSubscription {
  return {
    id, processor: 'app', instance: 'app', stream: streamInstance(id), consumer: 'c1', source: 'devnet', fromBlock: 0, toBlock: 99, mode: 'fill_missing',
    idempotencyKey: `key-${id}`, requestDigest: '{}', state: 'queued', createdAt: '2026-01-01T00:00:00.000Z', startedAt: null, finishedAt: null,
    blocksTotal: 0, currentChunk: null, lastError: null, cancelRequested: false, ...overrides,
  };
}

function consumer(stream: string, id = 'c1'): ConsumerRecord {
  return {
    version: 1, processor: 'app', instance: stream, id, role: 'required', leaseTtlSeconds: 60, leaseExpiresAt: 0, createdAt: '2026-01-01T00:00:00.000Z',
    credential: { algorithm: 'scrypt', cost: 2, blockSize: 1, parallelization: 1, salt: new Uint8Array(16), hash: new Uint8Array(32) },
    start: { position: 'earliest_retained', sequence: 0n }, delivered: 0n, deliveredCursor: 'x', acknowledged: 0n, acknowledgedCursor: 'x',
  };
}

function open(t: import('node:test').TestContext, dataDir = tempDir(t)): Store {
  const store = openStore({ dataDir, chainId: 1 });
  t.after(() => store.close());
  return store;
}

/** Keys of `stream` in a shared stream table. */
function streamKeys(store: Store, stream: string, kind: 'changes' | 'state' = 'changes'): number {
  const { start, end } = ownerRange(stream, 'binary');
  return [...store.streamTable(kind)!.getKeys({ start, end })].length;
}

test('ids: a subscription id has its own shape, and its stream is a valid instance id no processor takes', () => {
  assert.match(ID, SUBSCRIPTION_ID);
  assert.equal(streamInstance(ID), `bs~${ID.slice(3)}`);
  assertProcessorInstanceId(streamInstance(ID));
  assert.doesNotMatch('mj-000000000000-00000000', SUBSCRIPTION_ID);
  assert.doesNotMatch('constructor', SUBSCRIPTION_ID);
});

test('createSubscription writes the record, key, owned runs, consumer, binding and stream progress together', async (t) => {
  const store = open(t);
  const sub = record(ID, { blocksTotal: 8 });
  await createSubscription(store, sub, [{ from: 2, to: 4 }, { from: 10, to: 14 }], consumer(sub.stream));
  assert.deepEqual(readSubscription(store, ID), sub);
  assert.equal(subscriptionIdForKey(store, sub.idempotencyKey), ID);
  assert.deepEqual(subscriptionBinding(store, 'app', 'c1'), { subscription: ID, stream: sub.stream });
  assert.deepEqual(listBindings(store, 'app'), [{ subscription: ID, stream: sub.stream, consumer: 'c1' }]);
  assert.deepEqual(listBindings(store, 'ap'), [], 'another instance whose id is a prefix sees none');
  assert.equal(readConsumer(store.consumers, sub.stream, 'c1')?.instance, sub.stream, 'the consumer record belongs to the stream');
  assert.equal(readConsumer(store.consumers, 'app', 'c1'), undefined);
  assert.deepEqual(streamProgress(store, sub.stream), { publishedThrough: null, head: 0n });
  assert.deepEqual(listSubscriptions(store).map((s) => s.id), [ID]);
  assert.ok(store.processorInstances().includes(sub.stream));
});

test('createSubscription is all or nothing: a taken consumer id writes nothing', async (t) => {
  const store = open(t);
  await store.write(() => store.consumers.put(consumerKey('app', 'c1'), consumer('app')));
  const sub = record(ID);
  await assert.rejects(createSubscription(store, sub, [{ from: 0, to: 5 }], consumer(sub.stream)), SubscriptionConflict);
  assert.equal(readSubscription(store, ID), undefined);
  assert.equal(subscriptionIdForKey(store, sub.idempotencyKey), undefined);
  assert.equal(subscriptionBinding(store, 'app', 'c1'), undefined);
  assert.equal(readConsumer(store.consumers, sub.stream, 'c1'), undefined);
  assert.deepEqual(ownedRunsAfter(store, ID, -1, 10), []);
  // A second subscription cannot take the first one's consumer id either.
  const first = record(ID, { consumer: 'c2' });
  await createSubscription(store, first, [], consumer(first.stream, 'c2'));
  const second = record('bs-0000018f0001-0a0b0c0d', { consumer: 'c2' });
  await assert.rejects(createSubscription(store, second, [], consumer(second.stream, 'c2')), /consumer 'c2' already exists/);
});

test('owned runs: the runs after a published block, cut at it, in order; counts of owned blocks through a block', async (t) => {
  const store = open(t);
  const sub = record(ID);
  await createSubscription(store, sub, [{ from: 2, to: 4 }, { from: 10, to: 14 }, { from: 100, to: 100 }], consumer(sub.stream));
  assert.deepEqual(ownedRunsAfter(store, ID, -1, 10), [{ from: 2, to: 4 }, { from: 10, to: 14 }, { from: 100, to: 100 }]);
  assert.deepEqual(ownedRunsAfter(store, ID, 1, 1), [{ from: 2, to: 4 }]);
  assert.deepEqual(ownedRunsAfter(store, ID, 2, 1), [{ from: 3, to: 4 }], 'inside a run: the rest of it');
  assert.deepEqual(ownedRunsAfter(store, ID, 4, 2), [{ from: 10, to: 14 }, { from: 100, to: 100 }]);
  assert.deepEqual(ownedRunsAfter(store, ID, 9, 1), [{ from: 10, to: 14 }]);
  assert.deepEqual(ownedRunsAfter(store, ID, 13, 5), [{ from: 14, to: 14 }, { from: 100, to: 100 }]);
  assert.deepEqual(ownedRunsAfter(store, ID, 14, 5), [{ from: 100, to: 100 }]);
  assert.deepEqual(ownedRunsAfter(store, ID, 100, 5), []);
  assert.equal(ownedCountThrough(store, ID, null), 0);
  assert.equal(ownedCountThrough(store, ID, 1), 0);
  assert.equal(ownedCountThrough(store, ID, 3), 2);
  assert.equal(ownedCountThrough(store, ID, 12), 6);
  assert.equal(ownedCountThrough(store, ID, 1000), 9);
  // Runs of another subscription (an id sorting next to this one) are not this one's.
  const other = record('bs-0000018f0000-0a0b0c0e', { consumer: 'c9' });
  await createSubscription(store, other, [{ from: 5, to: 6 }], consumer(other.stream, 'c9'));
  assert.deepEqual(ownedRunsAfter(store, ID, 4, 1), [{ from: 10, to: 14 }]);
  assert.equal(ownedCountThrough(store, other.id, 1000), 2);
});

test('updateSubscription changes the record in one transaction; deleteSubscription removes everything the creation wrote and the stream\'s changes', async (t) => {
  const store = open(t);
  await migrateOwnStreamTables(store);
  const tables = store.tableNames().length;
  const sub = record(ID);
  await createSubscription(store, sub, [{ from: 0, to: 3 }], consumer(sub.stream));
  const updated = await updateSubscription(store, ID, (r) => ({ ...r, state: 'completed' }));
  assert.equal(updated?.state, 'completed');
  assert.equal(await updateSubscription(store, 'bs-000000000000-00000000', (r) => r), undefined);
  const stream = store.processor(sub.stream);
  await store.write(() => {
    stream.changes.put(u64Key(1n), Buffer.from('change'));
    writeProgress(stream.state, { ...readProgress(stream.state), changeSequence: 1n, reduceCursor: { number: 3, hash: `0x${'00'.repeat(32)}` } });
  });
  assert.deepEqual(streamProgress(store, sub.stream), { publishedThrough: 3, head: 1n });
  assert.equal(store.tableNames().length, tables, 'a stream takes no table of its own');
  assert.deepEqual(await deleteSubscription(store, readSubscription(store, ID)!), [], 'no table to drop');
  assert.equal(readSubscription(store, ID), undefined);
  assert.equal(subscriptionIdForKey(store, sub.idempotencyKey), undefined);
  assert.equal(subscriptionBinding(store, 'app', 'c1'), undefined);
  assert.equal(readConsumer(store.consumers, sub.stream, 'c1'), undefined);
  assert.deepEqual(ownedRunsAfter(store, ID, -1, 10), []);
  assert.equal(store.processorInstances().includes(sub.stream), false, 'the stream is gone with its changes and progress');
  assert.equal(streamKeys(store, sub.stream) + streamKeys(store, sub.stream, 'state'), 0);
  assert.deepEqual(listSubscriptions(store), []);
});

test('a creation refused for a taken consumer id leaves no stream keys; streams no subscription names are removed', async (t) => {
  const store = open(t);
  const first = record(ID);
  await createSubscription(store, first, [], consumer(first.stream));
  const baseline = store.tableNames().length;
  const second = record('bs-0000018f0001-0a0b0c0d', { idempotencyKey: 'other' });
  await assert.rejects(createSubscription(store, second, [], consumer(second.stream)), SubscriptionConflict);
  assert.equal(store.processorInstances().includes(second.stream), false, 'the refused stream left nothing');
  // A stream no subscription names (its record gone, its keys left).
  const orphan = store.processor('bs~0000018f0002-0a0b0c0d');
  await store.write(() => writeProgress(orphan.state, readProgress(orphan.state)));
  assert.deepEqual(await dropOrphanStreams(store), ['bs~0000018f0002-0a0b0c0d']);
  assert.equal(streamKeys(store, 'bs~0000018f0002-0a0b0c0d', 'state'), 0);
  assert.equal(store.tableNames().length, baseline);
  assert.deepEqual(await dropOrphanStreams(store), []);
  assert.ok(store.processorInstances().includes(first.stream));
});

test('two streams with the same sequences keep apart: pages, heads and progress are each stream\'s own', async (t) => {
  const store = open(t);
  const [a, b] = [record(ID), record('bs-0000018f0000-0a0b0c0e', { consumer: 'c2', idempotencyKey: 'b' })];
  await createSubscription(store, a, [], consumer(a.stream));
  await createSubscription(store, b, [], consumer(b.stream, 'c2'));
  const [ta, tb] = [store.processor(a.stream), store.processor(b.stream)];
  await store.write(() => {
    for (let n = 1n; n <= 3n; n += 1n) ta.changes.put(u64Key(n), Buffer.from(`a${n}`));
    for (let n = 1n; n <= 5n; n += 1n) tb.changes.put(u64Key(n), Buffer.from(`b${n}`));
  });
  assert.equal(changeHead(ta.changes), 3n);
  assert.equal(changeHead(tb.changes), 5n);
  assert.deepEqual([...ta.changes.getKeys({})].map((key) => (key as Buffer).readBigUInt64BE()), [1n, 2n, 3n]);
  assert.deepEqual([...tb.changes.getKeys({ start: u64Key(4n), reverse: true, limit: 2 })].map((key) => (key as Buffer).readBigUInt64BE()), [4n, 3n]);
  assert.equal(ta.changes.getBinary(u64Key(5n)), undefined, 'the other stream\'s sequence 5 is not this one\'s');
  assert.equal(tb.changes.getBinary(u64Key(2n))?.toString(), 'b2');
  await deleteSubscription(store, { ...readSubscription(store, a.id)!, state: 'completed' });
  assert.equal(changeHead(tb.changes), 5n, 'deleting one stream leaves the other whole');
  assert.equal(streamKeys(store, a.stream), 0);
});

test('1,000 subscriptions live at once, then deleted: the store\'s table count never moves and db verify stays clean', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir, chainId: 1 });
  await migrateOwnStreamTables(store);
  const baseline = store.tableNames();
  const ids: string[] = [];
  for (let i = 0; i < 1000; i += 1) {
    const id = `bs-${i.toString(16).padStart(12, '0')}-0a0b0c0d`;
    const sub = record(id, { consumer: `c${i}`, idempotencyKey: `loop-${i}` });
    await createSubscription(store, sub, [{ from: 0, to: 3 }], consumer(sub.stream, `c${i}`));
    ids.push(id);
  }
  assert.equal(listSubscriptions(store).length, 1000);
  assert.equal(store.processorInstances().filter((name) => name.startsWith('bs~')).length, 1000);
  assert.deepEqual(store.tableNames(), baseline, 'a thousand live streams, no table more');
  for (const id of ids) await deleteSubscription(store, { ...readSubscription(store, id)!, state: 'completed' });
  assert.deepEqual(store.tableNames(), baseline);
  assert.equal([...store.streamTable('state')!.getKeys({})].length, 0, 'every stream\'s keys are gone');
  await store.close();
  const report = await dbVerify(dataDir);
  assert.equal(report.ok, true, JSON.stringify(report.checks.filter((check) => !check.ok)));
  assert.ok(MAX_TABLES < 1000 * PROCESSOR_TABLE_KINDS.length, 'more streams than the table limit could have held as tables of their own');
});

test('a stream an earlier version kept in tables of its own is moved into the shared tables at start, readable the same, its tables dropped', async (t) => {
  const dataDir = tempDir(t);
  let store = openStore({ dataDir, chainId: 1 });
  const sub = record(ID);
  // The earlier layout: the stream's own p.bs~….* tables, with a change log and progress.
  const own = Object.fromEntries(PROCESSOR_TABLE_KINDS.map((kind) => [kind, openTable<unknown, Buffer | string>(store.env, processorTableSpec(sub.stream, kind))!]));
  await store.write(() => {
    for (let n = 1n; n <= 4n; n += 1n) own.changes!.put(u64Key(n), Buffer.from(`old${n}`));
    writeProgress(own.state as never, { ...readProgress(own.state as never), changeSequence: 4n });
  });
  assert.equal(store.processor(sub.stream).changes.getBinary(u64Key(2n))?.toString(), 'old2', 'read from its own tables before the move');
  await store.close();
  store = open(t, dataDir);
  assert.deepEqual(await migrateOwnStreamTables(store), [sub.stream]);
  assert.equal(store.tableNames().some((name) => name.startsWith(`p.${sub.stream}.`)), false, 'its own tables are dropped');
  const moved = store.processor(sub.stream);
  assert.equal(moved.changes.getBinary(u64Key(2n))?.toString(), 'old2');
  assert.equal(changeHead(moved.changes), 4n);
  assert.equal(readProgress(moved.state).changeSequence, 4n);
  assert.ok(store.processorInstances().includes(sub.stream));
  assert.deepEqual(await migrateOwnStreamTables(store), [], 'a second start has nothing to move');
});
