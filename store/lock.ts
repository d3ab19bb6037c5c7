/**
 * The data-directory write lock: one node, or one `db` command, per data directory.
 *
 * `<dataDir>/LOCK` holds a JSON record of its holder (pid, process start time, boot id,
 * holder name, since, nonce). It is created atomically with its full content by writing a
 * private staging file and hard-linking it to `LOCK` (link fails with EEXIST like O_EXCL, but
 * a reader never sees a half-written record).
 *
 * There is no time-based staleness: a lock is stale exactly when its holder process is gone
 * (no such pid, a zombie, or the pid now belongs to a process with another start time or
 * boot), so a node killed with `kill -9` can be restarted at once.
 *
 * Taking over a stale lock: the contender first claims a takeover guard named after the stale
 * record (`LOCK.takeover-<digest>`), with this same protocol, so only one contender handles a
 * given stale record; under the guard it checks `LOCK` still holds that record and renames its
 * own record over it. `LOCK` never disappears during a takeover, so a newcomer cannot slip in,
 * and a guard left by a contender that died mid-takeover is itself stale and taken over the
 * same way (one level deeper).
 *
 * Holders are identified by pid, so a data directory shared between hosts or PID namespaces
 * is not protected by this lock.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { currentProcessIdentity, isProcessAlive } from './process-identity.js';

export const LOCK_FILE_NAME = 'LOCK';

export interface LockHolder {
  readonly pid: number;
  readonly startTime: number | null;
  readonly bootId: string | null;
  /** What holds the lock, e.g. "node" or "db inspect". */
  readonly holder: string;
  /** ISO-8601 time the lock was taken. */
  readonly since: string;
  /** Makes every record unique, so a lock is only ever released or displaced by exact content. */
  readonly nonce: string;
}

export interface DataDirLock {
  readonly dataDir: string;
  readonly path: string;
  readonly holder: LockHolder;
  /** Removes the lock file if it is still this lock's; calling it again does nothing. */
  release(): void;
}

export class DataDirLockedError extends Error {
  readonly dataDir: string;
  readonly lockPath: string;
  readonly holder: LockHolder;
  constructor(dataDir: string, lockPath: string, holder: LockHolder) {
    const who = holder.pid === process.pid ? `this process (pid ${holder.pid}, "${holder.holder}")` : `pid ${holder.pid} ("${holder.holder}")`;
    super(`data directory ${dataDir} is locked by ${who} since ${holder.since}; stop it first and retry (lock file ${lockPath})`);
    this.name = 'DataDirLockedError';
    this.dataDir = dataDir;
    this.lockPath = lockPath;
    this.holder = holder;
  }
}

/** Attempts before giving up on a lock that keeps changing hands; each waits a little longer. */
const MAX_ATTEMPTS = 40;
/** Guards of guards are only needed when contenders die mid-takeover; this bounds the nesting. */
const MAX_GUARD_DEPTH = 4;
const TAKEOVER_INFIX = '.takeover-';

export function acquireDataDirLock(dataDir: string, holder: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const lockPath = join(dataDir, LOCK_FILE_NAME);
  const record: LockHolder = { ...currentProcessIdentity(), holder, since: new Date().toISOString(), nonce: randomBytes(8).toString('hex') };
  const content = `${JSON.stringify(record)}\n`;
  const staged = join(dataDir, `.${LOCK_FILE_NAME}.${record.pid}.${record.nonce}`);
  writeDurably(staged, content);
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const outcome = claim(lockPath, staged, content, 0);
      if (outcome === 'claimed') {
        removeTakeoverGuards(dataDir);
        return heldLock(dataDir, lockPath, record, content);
      }
      if (outcome !== 'busy') throw new DataDirLockedError(dataDir, lockPath, outcome);
      sleep(1 + attempt);
    }
  } finally {
    unlinkIfPresent(staged);
  }
  throw new Error(
    `could not take the lock ${lockPath}: a takeover of a stale lock is in progress or was abandoned; ` +
      `if no node or db command uses ${dataDir}, remove ${LOCK_FILE_NAME} and ${LOCK_FILE_NAME}${TAKEOVER_INFIX}* there and retry`,
  );
}

/** The current holder of a data directory's lock, if there is a readable lock file. */
export function readDataDirLock(dataDir: string): LockHolder | undefined {
  return readLockFile(join(dataDir, LOCK_FILE_NAME))?.holder;
}

/**
 * Makes `path` hold our record. 'claimed': it does. A LockHolder: a live process holds it.
 * 'busy': another contender is taking over the same stale record right now.
 */
function claim(path: string, staged: string, content: string, depth: number): 'claimed' | 'busy' | LockHolder {
  for (;;) {
    if (linkIfAbsent(staged, path)) return 'claimed';
    const existing = readLockFile(path);
    if (existing === undefined) continue;
    if (existing.content === content) return 'claimed';
    if (existing.holder && isProcessAlive(existing.holder)) return existing.holder;
    if (depth >= MAX_GUARD_DEPTH) return 'busy';
    const guard = `${path}${TAKEOVER_INFIX}${digest(existing.content)}`;
    const guardOutcome = claim(guard, staged, content, depth + 1);
    if (guardOutcome !== 'claimed') return 'busy';
    try {
      // Under the guard, only we may replace this stale record; if it is gone, a previous guard holder replaced it.
      if (readLockFile(path)?.content === existing.content) replaceWith(staged, path);
    } finally {
      if (readLockFile(guard)?.content === content) unlinkIfPresent(guard);
    }
  }
}

/** Atomically replaces `path` with a new hard link to `staged`. */
function replaceWith(staged: string, path: string): void {
  const swap = `${staged}.swap`;
  linkSync(staged, swap);
  try {
    renameSync(swap, path);
  } catch (error) {
    unlinkIfPresent(swap);
    throw error;
  }
}

/** Guards left behind by contenders that died mid-takeover refer to records no longer in LOCK. */
function removeTakeoverGuards(dataDir: string): void {
  for (const name of readdirSync(dataDir)) {
    if (name.startsWith(`${LOCK_FILE_NAME}${TAKEOVER_INFIX}`)) unlinkIfPresent(join(dataDir, name));
  }
}

function heldLock(dataDir: string, lockPath: string, holder: LockHolder, content: string): DataDirLock {
  let released = false;
  return {
    dataDir,
    path: lockPath,
    holder,
    release() {
      if (released) return;
      released = true;
      if (readLockFile(lockPath)?.content === content) unlinkIfPresent(lockPath);
    },
  };
}

function digest(content: string): string {
  return createHash('sha256').update(content).digest('hex').slice(0, 16);
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

interface LockFileContent {
  readonly content: string;
  /** undefined when the file is not a lock record (damaged); such a lock is treated as stale. */
  readonly holder: LockHolder | undefined;
}

function readLockFile(lockPath: string): LockFileContent | undefined {
  let content: string;
  try {
    content = readFileSync(lockPath, 'utf8');
  } catch (error) {
    if (isCode(error, 'ENOENT')) return undefined;
    throw error;
  }
  return { content, holder: parseLockHolder(content) };
}

function parseLockHolder(content: string): LockHolder | undefined {
  try {
    const value: unknown = JSON.parse(content);
    if (typeof value !== 'object' || value === null) return undefined;
    const record = value as Record<string, unknown>;
    if (!Number.isSafeInteger(record['pid']) || (record['pid'] as number) <= 0) return undefined;
    return {
      pid: record['pid'] as number,
      startTime: Number.isSafeInteger(record['startTime']) ? (record['startTime'] as number) : null,
      bootId: typeof record['bootId'] === 'string' ? record['bootId'] : null,
      holder: typeof record['holder'] === 'string' ? record['holder'] : 'unknown',
      since: typeof record['since'] === 'string' ? record['since'] : 'unknown',
      nonce: typeof record['nonce'] === 'string' ? record['nonce'] : '',
    };
  } catch {
    return undefined;
  }
}

function linkIfAbsent(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    if (isCode(error, 'EEXIST')) return false;
    throw error;
  }
}

function writeDurably(path: string, content: string): void {
  const fd = openSync(path, 'wx', 0o644);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error;
  }
}

function isCode(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}
