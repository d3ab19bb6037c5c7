import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BackupRefusedError, dbBackup, dbInspect, dbVerify } from '../../store/commands.js';
import { encodeChangeValue, putChange } from '../../store/change-log.js';
import { encodeCursor } from '../../store/cursor.js';
import { INITIAL_PROGRESS, writeProgress } from '../../store/coverage.js';
import { openStore } from '../../store/store.js';
import { readAncestorEpochs } from '../../store/meta.js';
import { acquireDataDirLock, DataDirLockedError } from '../../store/lock.js';
import { tempDir } from './helpers/temp-dir.js';

async function storeWithChanges(dataDir: string, count: number): Promise<bigint> {
  const store = openStore({ dataDir, chainId: 7 });
  const tables = store.processor('blobs');
  await store.write(() => {
    for (let sequence = 1n; sequence <= BigInt(count); sequence += 1n) {
      const cursor = encodeCursor({ epoch: store.epoch, chainId: 7, instance: 'blobs', sequence, block: { number: Number(sequence), hash: `0x${'ab'.repeat(32)}` } });
      putChange(tables.changes, sequence, encodeChangeValue('apply', cursor, JSON.stringify({ apiVersion: '1', sequence: String(sequence), cursor, operation: 'apply' })));
    }
    writeProgress(tables.state, { ...INITIAL_PROGRESS, changeSequence: BigInt(count) });
  });
  const epoch = store.epoch;
  await store.close();
  return epoch;
}

test('db backup writes a verified copy under a new epoch whose stored cursors name the new epoch', async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const epoch = await storeWithChanges(dataDir, 9000);
  const backup = await dbBackup(dataDir, join(dir, 'backup'));
  assert.equal(backup.sourceEpoch, epoch.toString(16).padStart(16, '0'));
  assert.notEqual(backup.storeEpoch, backup.sourceEpoch);
  assert.equal(backup.rotation.changes, 9000);
  const inspect = await dbInspect(join(dir, 'backup'));
  assert.equal(inspect.storeEpoch, backup.storeEpoch);
  assert.equal(inspect.tables.find((t) => t.name === 'p.blobs.changes')?.entries, 9000);
  const verify = await dbVerify(join(dir, 'backup'));
  assert.ok(verify.ok, JSON.stringify(verify.checks.filter((c) => !c.ok)));
  assert.equal((await dbVerify(dataDir)).ok, true, 'the original is untouched');

  // The restored store takes writes that overwrite what it holds (a compacting LMDB copy did not:
  // lmdb-js's LMDB aborted in mdb_page_alloc on such writes after MDB_CP_COMPACT).
  const restored = openStore({ dataDir: join(dir, 'backup') });
  assert.deepEqual(readAncestorEpochs(restored.meta), [backup.sourceEpoch], 'the copy records the epoch it descends from (JetStream epoch_changed)');
  const tables = restored.processor('blobs');
  for (let round = 0; round < 3; round += 1) {
    await restored.write(() => {
      for (let sequence = 1n; sequence <= 9000n; sequence += 1n) putChange(tables.changes, sequence, encodeChangeValue('apply', 'c', 'x'.repeat(500 + round)));
    });
  }
  await restored.close();
});

test('db verify fails a store whose stored cursors name another epoch', async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  await storeWithChanges(dataDir, 3);
  const store = openStore({ dataDir });
  const cursor = encodeCursor({ epoch: 12345n, chainId: 7, instance: 'blobs', sequence: 4n });
  await store.write(() => {
    putChange(store.processor('blobs').changes, 4n, encodeChangeValue('apply', cursor, JSON.stringify({ cursor })));
    writeProgress(store.processor('blobs').state, { ...INITIAL_PROGRESS, changeSequence: 4n });
  });
  await store.close();
  const verify = await dbVerify(dataDir);
  assert.equal(verify.ok, false);
  assert.match(verify.checks.find((c) => c.name === 'cursors')?.detail ?? '', /change 4: .*(another|epoch|store)/i);
});

test('db backup refuses before writing anything: tiered segments present, a non-empty target, or the lock held', async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  await storeWithChanges(dataDir, 2);
  mkdirSync(join(dataDir, 'segments'));
  writeFileSync(join(dataDir, 'segments', '000001.seg'), 'x');
  await assert.rejects(dbBackup(dataDir, join(dir, 'b1')), (error: Error) => error instanceof BackupRefusedError && /snapshot the whole data directory/.test(error.message));
  assert.ok(!existsSync(join(dir, 'b1')), 'nothing written');

  const other = join(dir, 'data2');
  await storeWithChanges(other, 2);
  mkdirSync(join(dir, 'b2'));
  writeFileSync(join(dir, 'b2', 'keep.txt'), 'x');
  await assert.rejects(dbBackup(other, join(dir, 'b2')), BackupRefusedError);
  assert.ok(existsSync(join(dir, 'b2', 'keep.txt')), 'the non-empty target is left as it was');

  const lock = acquireDataDirLock(other, 'test');
  try {
    await assert.rejects(dbBackup(other, join(dir, 'b3')), DataDirLockedError);
    assert.ok(!existsSync(join(dir, 'b3')));
  } finally {
    lock.release();
  }
});

test('db backup re-mints the cursors of a backfill-subscription stream kept in the shared stream tables, and db verify checks them', async (t) => {
  const dir = tempDir(t);
  const dataDir = join(dir, 'data');
  const store = openStore({ dataDir, chainId: 7 });
  const stream = 'bs~0000018f0000-0a0b0c0d';
  const tables = store.processor(stream);
  await store.write(() => {
    for (let sequence = 1n; sequence <= 5n; sequence += 1n) {
      const cursor = encodeCursor({ epoch: store.epoch, chainId: 7, instance: stream, sequence, block: { number: Number(sequence), hash: `0x${'cd'.repeat(32)}` } });
      putChange(tables.changes, sequence, encodeChangeValue('apply', cursor, JSON.stringify({ apiVersion: '1', sequence: String(sequence), cursor, operation: 'apply' })));
    }
    writeProgress(tables.state, { ...INITIAL_PROGRESS, changeSequence: 5n });
  });
  assert.ok(store.tableNames().includes('s.changes') && !store.tableNames().some((name) => name.startsWith(`p.${stream}.`)), 'the stream lives in the shared tables');
  await store.close();
  const backup = await dbBackup(dataDir, join(dir, 'backup'));
  assert.equal(backup.rotation.changes, 5, 'every change of the stream re-minted');
  const verify = await dbVerify(join(dir, 'backup'));
  assert.ok(verify.ok, JSON.stringify(verify.checks.filter((c) => !c.ok)));
  assert.ok(verify.checks.some((check) => check.name === `processor ${stream} change log and coverage` && check.ok), 'verify walks the stream\'s log');
});
