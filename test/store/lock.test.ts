import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireDataDirLock, DataDirLockedError, LOCK_FILE_NAME, readDataDirLock } from '../../store/lock.js';
import { childHoldingLock, killHard } from './helpers/child-lock.js';
import { tempDir } from './helpers/temp-dir.js';

test('the lock file records pid, process start time, holder and since', (t) => {
  const dataDir = tempDir(t);
  const lock = acquireDataDirLock(dataDir, 'node');
  try {
    const record = JSON.parse(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8')) as Record<string, unknown>;
    assert.equal(record['pid'], process.pid);
    assert.equal(typeof record['startTime'], 'number');
    assert.equal(record['holder'], 'node');
    assert.ok(!Number.isNaN(Date.parse(String(record['since']))));
    assert.deepEqual(readDataDirLock(dataDir), lock.holder);
  } finally {
    lock.release();
  }
  assert.equal(existsSync(join(dataDir, LOCK_FILE_NAME)), false, 'release removes the lock file');
  assert.deepEqual(readdirSync(dataDir), [], 'no staging files are left behind');
});

test('a second acquisition in the same process refuses, naming the holder', (t) => {
  const dataDir = tempDir(t);
  const lock = acquireDataDirLock(dataDir, 'node');
  try {
    assert.throws(
      () => acquireDataDirLock(dataDir, 'db inspect'),
      (error: unknown) =>
        error instanceof DataDirLockedError &&
        error.holder.pid === process.pid &&
        error.holder.holder === 'node' &&
        error.message.includes(dataDir) &&
        error.message.includes(lock.holder.since),
    );
  } finally {
    lock.release();
  }
  acquireDataDirLock(dataDir, 'db inspect').release();
});

test('a lock held by another live process makes acquisition refuse with its pid, command and since', async (t) => {
  const dataDir = tempDir(t);
  const child = await childHoldingLock(t, dataDir, 'node start');
  assert.throws(
    () => acquireDataDirLock(dataDir, 'db compact'),
    (error: unknown) =>
      error instanceof DataDirLockedError &&
      error.holder.pid === child.pid &&
      error.holder.holder === 'node start' &&
      error.message.includes(`pid ${child.pid}`) &&
      error.message.includes('"node start"'),
  );
  await killHard(child);
});

test('the lock of a SIGKILLed holder is taken over at once, without waiting for any timeout', async (t) => {
  const dataDir = tempDir(t);
  const child = await childHoldingLock(t, dataDir);
  assert.throws(() => acquireDataDirLock(dataDir, 'node'), DataDirLockedError);
  await killHard(child);

  const lock = acquireDataDirLock(dataDir, 'node');
  try {
    assert.equal(readDataDirLock(dataDir)?.pid, process.pid);
  } finally {
    lock.release();
  }
  assert.deepEqual(readdirSync(dataDir), []);
});

test('a lock whose pid now belongs to a process with another start time is stale (pid reuse)', (t) => {
  const dataDir = tempDir(t);
  const reused = { pid: process.pid, startTime: 1, bootId: null, holder: 'node', since: '2020-01-01T00:00:00.000Z', nonce: 'old' };
  writeFileSync(join(dataDir, LOCK_FILE_NAME), JSON.stringify(reused));
  const lock = acquireDataDirLock(dataDir, 'node');
  assert.equal(readDataDirLock(dataDir)?.nonce, lock.holder.nonce);
  lock.release();
});

test('a lock from an earlier boot is stale even if its pid and start time match a live process', (t) => {
  const dataDir = tempDir(t);
  const first = acquireDataDirLock(dataDir, 'node');
  const earlierBoot = { ...first.holder, bootId: 'another-boot', nonce: 'earlier' };
  writeFileSync(join(dataDir, LOCK_FILE_NAME), JSON.stringify(earlierBoot));
  const lock = acquireDataDirLock(dataDir, 'node');
  assert.equal(readDataDirLock(dataDir)?.nonce, lock.holder.nonce);
  lock.release();
});

test('a damaged lock file is treated as stale', (t) => {
  const dataDir = tempDir(t);
  writeFileSync(join(dataDir, LOCK_FILE_NAME), 'not json');
  const lock = acquireDataDirLock(dataDir, 'node');
  assert.equal(readDataDirLock(dataDir)?.holder, 'node');
  lock.release();
});

test('releasing removes the lock file only while it is still ours', (t) => {
  const dataDir = tempDir(t);
  const lock = acquireDataDirLock(dataDir, 'node');
  const someoneElse = { ...lock.holder, holder: 'db compact', nonce: 'theirs' };
  writeFileSync(join(dataDir, LOCK_FILE_NAME), JSON.stringify(someoneElse));
  lock.release();
  assert.equal(readDataDirLock(dataDir)?.nonce, 'theirs');
});

test('release is idempotent', (t) => {
  const dataDir = tempDir(t);
  const lock = acquireDataDirLock(dataDir, 'node');
  lock.release();
  const next = acquireDataDirLock(dataDir, 'node');
  lock.release();
  assert.equal(readDataDirLock(dataDir)?.nonce, next.holder.nonce, 'a second release of an old lock leaves the new holder alone');
  next.release();
});

test('when several processes race for one stale lock exactly one wins', async (t) => {
  const dataDir = tempDir(t);
  const dead = spawn(process.execPath, ['-e', '']);
  await once(dead, 'exit');
  const stale = { pid: dead.pid, startTime: 1, bootId: null, holder: 'node', since: '2020-01-01T00:00:00.000Z', nonce: 'crashed' };
  writeFileSync(join(dataDir, LOCK_FILE_NAME), JSON.stringify(stale));

  const script = fileURLToPath(new URL('./helpers/contend-lock.js', import.meta.url));
  const startAt = String(Date.now() + 1000);
  const contenders = Array.from({ length: 8 }, () => spawn(process.execPath, [script, dataDir, startAt], { stdio: ['pipe', 'pipe', 'inherit'] }));
  t.after(() => contenders.forEach((child) => child.exitCode === null && child.kill('SIGKILL')));
  const outcomes = await Promise.all(contenders.map(async (child) => String((await once(child.stdout, 'data'))[0]).trim()));
  const exits = contenders.map((child) => (child.exitCode === null ? once(child, 'exit') : Promise.resolve()));
  for (const child of contenders) child.stdin.end();
  await Promise.all(exits);

  assert.deepEqual(outcomes.sort(), ['refused', 'refused', 'refused', 'refused', 'refused', 'refused', 'refused', 'won']);
  assert.deepEqual(readdirSync(dataDir), [], 'the winner released the lock and no staging or guard files remain');
});

test('a takeover guard left by a contender that died mid-takeover does not block the next one', async (t) => {
  const dataDir = tempDir(t);
  const dead = spawn(process.execPath, ['-e', '']);
  await once(dead, 'exit');
  const staleLock = JSON.stringify({ pid: dead.pid, startTime: 1, bootId: null, holder: 'node', since: '2020-01-01T00:00:00.000Z', nonce: 'a' });
  const deadContender = JSON.stringify({ pid: dead.pid, startTime: 1, bootId: null, holder: 'node', since: '2020-01-01T00:00:01.000Z', nonce: 'b' });
  writeFileSync(join(dataDir, LOCK_FILE_NAME), staleLock);
  const guardName = `${LOCK_FILE_NAME}.takeover-${createHash('sha256').update(staleLock).digest('hex').slice(0, 16)}`;
  writeFileSync(join(dataDir, guardName), deadContender);

  const lock = acquireDataDirLock(dataDir, 'node');
  assert.equal(readDataDirLock(dataDir)?.nonce, lock.holder.nonce);
  assert.deepEqual(readdirSync(dataDir), [LOCK_FILE_NAME], 'the dead guard is cleaned up');
  lock.release();
});
