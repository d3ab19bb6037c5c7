import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../store/store.js';
import { addClaims, claimsOf, dropPending, encodeArtifact, getRetained, INSTANCE_OWNER, promotePending, pruneWindow, putPending, readTotals, releaseClaims, retainedBounds, retainedRange } from '../../store/artifacts.js';
import { tempDir } from './helpers/temp-dir.js';

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;
/** A new store's artifact table of instance `p`, closed when the test ends. */
function freshTable(t: TestContext) {
  const store = openStore({ dataDir: tempDir(t), chainId: 1 });
  t.after(() => store.close());
  return { store, table: store.processor('p').artifacts };
}

const record = (n: number, payload = `{"n":${n}}`) => encodeArtifact({ number: n, hash: hash(n + 1000), parentHash: hash(n + 999), timestamp: 1_700_000_000 + n }, Buffer.from(payload));

test('pending candidates become retained at finality (an undone one never does); owners keep a record until the last claim is released', async (t) => {
  const { store, table } = freshTable(t);
  await store.write(() => {
    for (let n = 1; n <= 6; n += 1) putPending(table, n, record(n));
    dropPending(table, 6);
    putPending(table, 6, record(6, '{"n":"replacement"}'));
    dropPending(table, 5);
  });
  assert.deepEqual([readTotals(table).pendingCount, readTotals(table).retainedCount], [5, 0]);
  await store.write(() => promotePending(table, 1, 6, null));
  const totals = readTotals(table);
  assert.deepEqual([totals.pendingCount, totals.pendingBytes, totals.retainedCount], [0, 0, 5]);
  assert.deepEqual([...retainedRange(table, 0, 100, 100)].map((r) => r.number), [1, 2, 3, 4, 6], 'the undone block 5 is not retained');
  assert.equal(getRetained(table, 6)!.payload.toString(), '{"n":"replacement"}');
  assert.equal(getRetained(table, 2)!.hash, hash(1002));
  assert.deepEqual(retainedBounds(table), { fromBlock: 1, toBlock: 6 });

  await store.write(() => addClaims(table, { ownerKind: 'operator_pin', ownerId: 'keep' }, 2, 3));
  assert.deepEqual(claimsOf(table, 2), [INSTANCE_OWNER, { ownerKind: 'operator_pin', ownerId: 'keep' }]);
  const released = await store.write(() => releaseClaims(table, INSTANCE_OWNER, 0, Number.MAX_SAFE_INTEGER));
  assert.deepEqual([released.released, released.deleted], [5, 3]);
  assert.equal(released.freedBytes, record(1).length + record(4).length + record(6, '{"n":"replacement"}').length);
  assert.deepEqual([...retainedRange(table, 0, 100, 100)].map((r) => r.number), [2, 3], 'pinned records stay');
  assert.equal(readTotals(table).retainedBytes, record(2).length + record(3).length);
  await store.write(() => releaseClaims(table, { ownerKind: 'operator_pin', ownerId: 'keep' }, 3, 3));
  assert.deepEqual(retainedBounds(table), { fromBlock: 2, toBlock: 2 });
});

test('the window releases only the instance claim below its floor, once; a record below the floor at finality is not kept', async (t) => {
  const { store, table } = freshTable(t);
  await store.write(() => {
    for (let n = 0; n <= 9; n += 1) putPending(table, n, record(n));
    promotePending(table, 0, 9, 2);
    addClaims(table, { ownerKind: 'processor_job', ownerId: 'mj-1' }, 3, 3);
  });
  assert.deepEqual(retainedBounds(table), { fromBlock: 2, toBlock: 9 }, 'blocks 0 and 1 were already outside the window');
  const pruned = await store.write(() => pruneWindow(table, 6));
  assert.deepEqual([pruned.released, pruned.deleted], [4, 3]);
  assert.deepEqual([...retainedRange(table, 0, 100, 100)].map((r) => r.number), [3, 6, 7, 8, 9], 'the job keeps block 3');
  assert.deepEqual(await store.write(() => pruneWindow(table, 6)), { released: 0, deleted: 0, freedBytes: 0 }, 'nothing twice');
  assert.equal(readTotals(table).windowPrunedThrough, 5);
});

test('a record whose payload does not match its checksum is refused', async (t) => {
  const { store, table } = freshTable(t);
  const damaged = record(1);
  damaged[damaged.length - 2] = damaged[damaged.length - 2]! ^ 1;
  await store.write(() => { putPending(table, 1, damaged); promotePending(table, 1, 1, null); });
  assert.throws(() => getRetained(table, 1), /does not match its checksum/);
});
