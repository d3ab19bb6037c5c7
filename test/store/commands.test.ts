import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { dbCompact, dbInspect, dbVerify, registerVerifyCheck } from '../../store/commands.js';
import { openStore, type Store } from '../../store/store.js';
import { openEnvironment, openTable, storePath } from '../../store/store.js';
import { StoreNotFoundError } from '../../store/errors.js';
import { encodeJournalMove } from '../../store/journal.js';
import { materialKey } from '../../store/chain-material.js';
import { hashKey, u64Key } from '../../store/keys.js';
import { blockRecordKey } from '../../store/undo-records.js';
import { acquireDataDirLock, DataDirLockedError, readDataDirLock } from '../../store/lock.js';
import { epochToHex } from '../../store/meta.js';
import { childHoldingLock, killHard } from './helpers/child-lock.js';
import { tempDir } from './helpers/temp-dir.js';

function blockHash(number: number): Buffer {
  return hashKey(`0x${number.toString(16).padStart(64, '0')}`);
}

function headerKey(number: number): Buffer {
  return number % 2 === 0 ? materialKey(number, blockHash(number)) : blockHash(number);
}

/**
 * Writes a consistent little chain: headers, canonical index, hash→number and an apply per block. Even blocks'
 * headers are keyed number ‖ hash (this version), odd ones by hash alone (stores of earlier versions).
 */
function writeChain(store: Store, count: number): void {
  store.env.transactionSync(() => {
    for (let number = 0; number < count; number++) {
      const hash = blockHash(number);
      store.chain.headers.putSync(headerKey(number), Buffer.alloc(500, number % 256));
      store.chain.canonical.putSync(u64Key(number), hash);
      store.chain.hashToNumber.putSync(hash, u64Key(number));
      store.chain.journal.putSync(u64Key(number + 1), encodeJournalMove({ op: 'apply', number, hash }));
    }
  });
}

async function storeWithChain(dataDir: string, count: number, chainId = 1): Promise<{ epoch: bigint }> {
  const store = openStore({ dataDir, chainId });
  writeChain(store, count);
  const epoch = store.epoch;
  await store.close();
  return { epoch };
}

test('db inspect reports identity, sizes and every table with its entries', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir, chainId: 1 });
  writeChain(store, 50);
  store.processor('blobs-v1').changes.putSync(u64Key(1n), Buffer.from('frame'));
  const { epoch, createdAt } = store;
  await store.close();

  const report = await dbInspect(dataDir);
  assert.equal(report.dataDir, dataDir);
  assert.equal(report.storeEpoch, epochToHex(epoch));
  assert.match(report.storeEpoch ?? '', /^[0-9a-f]{16}$/);
  assert.equal(report.schemaVersion, 1);
  assert.equal(report.chainId, 1);
  assert.equal(report.createdAt, createdAt);
  assert.ok(report.mapSize > 0);
  assert.ok(report.sizeBytes > 0);
  const byName = new Map(report.tables.map((table) => [table.name, table]));
  assert.equal(byName.get('chain.headers')?.entries, 50);
  assert.equal(byName.get('chain.journal')?.entries, 50);
  assert.equal(byName.get('p.blobs-v1.changes')?.entries, 1);
  assert.equal(byName.get('consumers')?.entries, 0);
  assert.ok((byName.get('chain.headers')?.sizeBytes ?? 0) >= 50 * 500);
  assert.ok(report.tables.every((table) => table.registered));
  assert.equal(readDataDirLock(dataDir), undefined, 'the lock is released afterwards');
});

test('db commands refuse a directory without a store and leave it empty', async (t) => {
  const dataDir = tempDir(t);
  await assert.rejects(dbInspect(dataDir), StoreNotFoundError);
  await assert.rejects(dbVerify(dataDir), StoreNotFoundError);
  await assert.rejects(dbCompact(dataDir), StoreNotFoundError);
  assert.deepEqual(readdirSync(dataDir), []);
});

test('db commands refuse while a running node holds the data-directory lock', async (t) => {
  const dataDir = tempDir(t);
  await storeWithChain(dataDir, 3);
  const node = await childHoldingLock(t, dataDir, 'node');
  for (const command of [dbInspect, dbVerify, dbCompact]) {
    await assert.rejects(command(dataDir), (error: unknown) => error instanceof DataDirLockedError && error.holder.pid === node.pid);
  }
  await killHard(node);
  assert.equal((await dbVerify(dataDir)).ok, true, 'after the node died the command runs at once');
});

test('db commands refuse while this process holds the lock', async (t) => {
  const dataDir = tempDir(t);
  await storeWithChain(dataDir, 1);
  const lock = acquireDataDirLock(dataDir, 'node');
  try {
    await assert.rejects(dbInspect(dataDir), DataDirLockedError);
  } finally {
    lock.release();
  }
});

test('db verify passes on a consistent store', async (t) => {
  const dataDir = tempDir(t);
  await storeWithChain(dataDir, 20);
  const report = await dbVerify(dataDir);
  assert.equal(report.ok, true, JSON.stringify(report.checks.filter((check) => !check.ok)));
  const names = report.checks.map((check) => check.name);
  for (const name of ['meta.present', 'meta.storeEpoch', 'meta.schemaVersion', 'tables.registered', 'tables.open', 'keys:chain.canonical', 'keys:chain.journal', 'chain.canonical', 'chain.journal']) {
    assert.ok(names.includes(name), `missing check ${name}`);
  }
});

test('db verify finds a canonical block whose header or hash→number entry is missing', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir });
  writeChain(store, 10);
  store.chain.headers.removeSync(headerKey(3));
  store.chain.headers.removeSync(headerKey(4));
  store.chain.hashToNumber.putSync(blockHash(5), u64Key(6));
  await store.close();

  const report = await dbVerify(dataDir);
  assert.equal(report.ok, false);
  const canonical = report.checks.find((check) => check.name === 'chain.canonical');
  assert.equal(canonical?.ok, false);
  assert.match(canonical?.detail ?? '', /block 3: header 0x0+3 is missing/);
  assert.match(canonical?.detail ?? '', /block 4: header 0x0+4 is missing/);
  assert.match(canonical?.detail ?? '', /block 5: hashToNumber maps 0x0+5 to 6/);
});

test('db verify finds a gap in the journal and a key of the wrong width', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir });
  writeChain(store, 10);
  store.chain.journal.removeSync(u64Key(4));
  store.chain.canonical.putSync(Buffer.from([1, 2, 3]), blockHash(1));
  await store.close();

  const report = await dbVerify(dataDir);
  assert.equal(report.ok, false);
  assert.match(report.checks.find((check) => check.name === 'chain.journal')?.detail ?? '', /sequence 5 follows 3/);
  const keys = report.checks.find((check) => check.name === 'keys:chain.canonical');
  assert.equal(keys?.ok, false);
  assert.match(keys?.detail ?? '', /key 010203 is 3 bytes, expected 8/);
});

test('db verify takes an undo table\'s block records (16-byte keys) and an earlier version\'s per-write records (12), and flags any other width', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir });
  writeChain(store, 10);
  const undo = store.processor('erc20').undo;
  undo.putSync(blockRecordKey(7, 3), Buffer.from([0, 0, 1, 9, 0, 0, 0, 0]));
  undo.putSync(Buffer.concat([u64Key(8), Buffer.from([0, 0, 0, 0])]), Buffer.from([0, 0, 1, 9]));
  await store.close();
  const passing = await dbVerify(dataDir);
  assert.equal(passing.checks.find((check) => check.name === 'keys:p.erc20.undo')?.ok, true, JSON.stringify(passing.checks.filter((check) => !check.ok)));
  const again = openStore({ dataDir });
  again.processor('erc20').undo.putSync(Buffer.concat([u64Key(9), Buffer.from([0, 0, 0, 0, 0])]), Buffer.from([0]));
  await again.close();
  const failing = await dbVerify(dataDir);
  const keys = failing.checks.find((check) => check.name === 'keys:p.erc20.undo');
  assert.equal(keys?.ok, false);
  assert.match(keys?.detail ?? '', /key 00000000000000090000000000 is 13 bytes, expected 16 or 12/);
});

test('a table this binary does not know is listed by inspect and flagged by verify', async (t) => {
  const dataDir = tempDir(t);
  await storeWithChain(dataDir, 1);
  const env = openEnvironment(storePath(dataDir), false);
  openTable<Buffer, Buffer>(env, { name: 'mystery', keyEncoding: 'binary', valueEncoding: 'binary', keyLayout: 'unknown' })?.putSync(Buffer.from('k'), Buffer.from('v'));
  await env.close();

  const inspected = await dbInspect(dataDir);
  assert.deepEqual(inspected.tables.find((table) => table.name === 'mystery'), { name: 'mystery', registered: false, entries: 1, sizeBytes: inspected.pageSize });
  const verified = await dbVerify(dataDir);
  assert.equal(verified.ok, false);
  assert.match(verified.checks.find((check) => check.name === 'tables.registered')?.detail ?? '', /table mystery is not one this binary knows/);
});

test('db verify reports an unsupported schema version instead of throwing', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir });
  store.meta.putSync('schemaVersion', 9);
  await store.close();
  const report = await dbVerify(dataDir);
  assert.equal(report.ok, false);
  assert.match(report.checks.find((check) => check.name === 'meta.schemaVersion')?.detail ?? '', /9 is not the supported version 1/);
  assert.equal((await dbInspect(dataDir)).schemaVersion, 9, 'inspect still shows what the store has');
});

test('checks registered later run with the built-in ones, and a throwing check is reported as failed', async (t) => {
  const dataDir = tempDir(t);
  await storeWithChain(dataDir, 2);
  const unregisterCount = registerVerifyCheck({
    name: 'test.counts-consumers',
    run: (context) => ({ name: 'test.counts-consumers', ok: true, detail: `${context.table<unknown, string>('consumers')?.getKeysCount()} consumers` }),
  });
  const unregisterThrowing = registerVerifyCheck({
    name: 'test.throws',
    run: () => {
      throw new Error('boom');
    },
  });
  t.after(unregisterCount);
  t.after(unregisterThrowing);
  assert.throws(() => registerVerifyCheck({ name: 'test.throws', run: () => [] }), /already registered/);
  const report = await dbVerify(dataDir);
  assert.deepEqual(report.checks.find((check) => check.name === 'test.counts-consumers'), { name: 'test.counts-consumers', ok: true, detail: '0 consumers' });
  assert.deepEqual(report.checks.find((check) => check.name === 'test.throws'), { name: 'test.throws', ok: false, detail: 'check failed to run: boom' });
  assert.equal(report.ok, false);

  unregisterCount();
  unregisterThrowing();
  assert.equal((await dbVerify(dataDir)).ok, true, 'unregistered checks no longer run');
});

test('db compact shrinks a store after deletions and keeps its epoch and every entry', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir, chainId: 1 });
  writeChain(store, 400);
  const bulk = store.processor('erc20');
  store.env.transactionSync(() => {
    for (let i = 0; i < 2000; i++) bulk.entities.putSync(u64Key(i), Buffer.alloc(2000, i % 256));
  });
  store.env.transactionSync(() => {
    for (let i = 0; i < 1990; i++) bulk.entities.removeSync(u64Key(i));
  });
  const epoch = store.epoch;
  await store.close();
  const before = await dbInspect(dataDir);

  const result = await dbCompact(dataDir);
  assert.equal(result.storeEpoch, epochToHex(epoch));
  assert.equal(result.sizeBytesBefore, before.sizeBytes);
  assert.ok(result.sizeBytesAfter < result.sizeBytesBefore / 2, `expected a smaller file: ${result.sizeBytesBefore} → ${result.sizeBytesAfter}`);
  assert.deepEqual(readdirSync(dataDir).sort(), ['db'], 'no copy, set-aside database or lock is left behind');

  const after = await dbInspect(dataDir);
  assert.deepEqual(
    after.tables.map(({ name, entries }) => ({ name, entries })),
    before.tables.map(({ name, entries }) => ({ name, entries })),
  );
  assert.equal((await dbVerify(dataDir)).ok, true);
  const reopened = openStore({ dataDir, chainId: 1 });
  try {
    assert.equal(reopened.epoch, epoch);
    assert.equal(reopened.processor('erc20').entities.get(u64Key(1995))?.length, 2000);
  } finally {
    await reopened.close();
  }
});

test('a compacted store takes overwrites of its values (LMDB\'s own compacting copy crashed the process on these)', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir, chainId: 1 });
  const tables = store.processor('erc20');
  store.env.transactionSync(() => {
    for (let i = 0; i < 15_000; i++) tables.entities.putSync(u64Key(i), Buffer.alloc(500, i % 256));
  });
  store.env.transactionSync(() => {
    for (let i = 0; i < 15_000; i += 2) tables.entities.removeSync(u64Key(i));
  });
  await store.close();
  await dbCompact(dataDir);

  const compacted = openStore({ dataDir, chainId: 1 });
  try {
    const entities = compacted.processor('erc20').entities;
    for (let round = 1; round <= 5; round += 1) {
      compacted.env.transactionSync(() => {
        for (let i = 1; i < 15_000; i += 2) entities.putSync(u64Key(i), Buffer.alloc(500 + round, round));
      });
    }
    assert.equal(entities.getKeysCount(), 7500);
    assert.deepEqual(entities.get(u64Key(14_999)), Buffer.alloc(505, 5));
  } finally {
    await compacted.close();
  }
  assert.equal((await dbVerify(dataDir)).ok, true);
});

test('a compaction that died between its renames is undone by the next open, keeping the old database', async (t) => {
  const dataDir = tempDir(t);
  const { epoch } = await storeWithChain(dataDir, 5);
  // The crash state: the old database set aside, the new copy (partial here) not yet in place.
  renameSync(join(dataDir, 'db'), join(dataDir, 'db.pre-compact-1700000000000'));
  mkdirSync(join(dataDir, 'db.compact-1700000000000'));

  const store = openStore({ dataDir, chainId: 1 });
  try {
    assert.equal(store.epoch, epoch, 'the old database is back, not a fresh store');
    assert.equal(store.chain.headers.getKeysCount(), 5);
  } finally {
    await store.close();
  }
  await dbInspect(dataDir);
  assert.deepEqual(readdirSync(dataDir).sort(), ['db'], 'leftovers are removed under the lock');
});

test('db commands finish an interrupted compaction before they run', async (t) => {
  const dataDir = tempDir(t);
  const { epoch } = await storeWithChain(dataDir, 5);
  renameSync(join(dataDir, 'db'), join(dataDir, 'db.pre-compact-1700000000000'));
  const report = await dbInspect(dataDir);
  assert.equal(report.storeEpoch, epochToHex(epoch));
  assert.equal(existsSync(join(dataDir, 'db.pre-compact-1700000000000')), false);
});
