/**
 * `db backup <path>`: a consistent, verified, store-only copy of the data directory's database,
 * laid out as a data directory (`<path>/db/data.mdb`) so `db verify --data-dir <path>` and a
 * restore work on it as they are. Runs under the data-directory write lock (the caller takes it):
 *
 * 1. refuses before writing anything when the target already holds something, or when the data
 *    directory has tiered artifact segments (`<data_dir>/segments/`, outside LMDB: then only a
 *    snapshot of the whole data directory is consistent);
 * 2. a compacted copy of every table (store/copy-entries.ts); consistent because the write lock
 *    keeps every writer out while it runs;
 * 3. gives the copy a new store epoch (store/epoch-rotation.ts): a restored store is a new store,
 *    so cursors of the original answer `reset_required`, while coverage, rows, changes and
 *    consumers are the same;
 * 4. flushes it to disk and verifies it: every table's entry count equals the original's (the
 *    dropped query-and-follow snapshots excepted), then every `db verify` check passes on the copy.
 *
 * A failed backup removes what it wrote. The p2p identity secret is not part of the store and is
 * not copied.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { fsyncPath } from './fsync-path.js';
import { join } from 'node:path';
import { openEnvironment, openTable, storePath, type RootEnvironment } from './store.js';
import { rotateStoreEpoch, type EpochRotation } from './epoch-rotation.js';
import { epochToHex, readRawMeta, validateMeta, type MetaTable } from './meta.js';
import { allTableStats, dataFileSize } from './stats.js';
import { META_TABLE, SHARED_TABLES } from './tables.js';
import { runVerifyChecks, openRegisteredTable, type VerifyCheckResult } from './verify.js';
import { listTableNames } from './store.js';
import { copyEntries } from './copy-entries.js';

/** Where tiered artifact storage keeps segment files, outside the LMDB environment. */
export const SEGMENTS_DIR_NAME = 'segments';

export interface DbBackupResult {
  readonly dataDir: string;
  readonly backupPath: string;
  /** The original store's epoch and the backup's own (new) epoch. */
  readonly sourceEpoch: string;
  readonly storeEpoch: string;
  readonly sizeBytesSource: number;
  readonly sizeBytes: number;
  readonly tables: number;
  readonly entries: number;
  readonly rotation: EpochRotation;
  readonly verified: boolean;
  readonly checks: readonly VerifyCheckResult[];
  readonly seconds: number;
}

export class BackupRefusedError extends Error {
  override readonly name = 'BackupRefusedError';
}

/** Tables whose rows a backup drops on purpose (query-and-follow snapshots name the old epoch). */
const DROPPED_TABLES = new Set<string>([SHARED_TABLES.snapshots.name, SHARED_TABLES.snapshotRows.name]);

export function assertBackupPossible(dataDir: string, backupPath: string): void {
  const segments = join(dataDir, SEGMENTS_DIR_NAME);
  if (existsSync(segments) && readdirSync(segments).length > 0) {
    throw new BackupRefusedError(`${segments} holds tiered artifact segments, which live outside the database: a store-only backup would be incomplete. Stop the node and snapshot the whole data directory (${dataDir}) instead; nothing was written`);
  }
  if (existsSync(backupPath) && readdirSync(backupPath).length > 0) {
    throw new BackupRefusedError(`backup path ${backupPath} is not empty; give a new or empty directory (nothing was written)`);
  }
}

function contentsOf(env: RootEnvironment, path: string): { epoch: string; entries: Map<string, number>; recordsAncestry: boolean } {
  const meta = openTable<unknown, string>(env, META_TABLE) as MetaTable | undefined;
  if (!meta) throw new Error(`store at ${path} has no meta table`);
  const identity = validateMeta(readRawMeta(meta), path);
  return { epoch: epochToHex(identity.epoch), entries: new Map(allTableStats(env).map((t) => [t.name, t.entries])), recordsAncestry: meta.get('ancestorEpochs') !== undefined };
}

/** What the copy holds once its epoch is rotated: the source's entries, and meta `ancestorEpochs` when the source had none (epoch-rotation.ts). */
function expectedAfterRotation(source: ReturnType<typeof contentsOf>): ReturnType<typeof contentsOf> {
  const entries = new Map(source.entries);
  if (!source.recordsAncestry) entries.set(META_TABLE.name, (entries.get(META_TABLE.name) ?? 0) + 1);
  return { ...source, entries };
}


/** Call with the data-directory lock held and a store present. */
export async function backupStore(dataDir: string, backupPath: string): Promise<DbBackupResult> {
  const started = process.hrtime.bigint();
  assertBackupPossible(dataDir, backupPath);
  const sourcePath = storePath(dataDir);
  const copyPath = storePath(backupPath);
  const createdTarget = !existsSync(backupPath);
  mkdirSync(copyPath, { recursive: true, mode: 0o700 });
  try {
    // Our own compacted copy (store/copy-entries.ts), read in one read transaction per table of a
    // source nobody else writes (the write lock is held): not LMDB's MDB_CP_COMPACT copy, which
    // lmdb-js's LMDB crashes on once its values are overwritten.
    const source = openEnvironment(sourcePath, true);
    let expected: ReturnType<typeof contentsOf>;
    try {
      expected = expectedAfterRotation(contentsOf(source, sourcePath));
      await copyEntries(source, copyPath);
    } finally {
      await source.close();
    }
    const copy = openEnvironment(copyPath, false);
    let rotation: EpochRotation;
    try {
      rotation = rotateStoreEpoch(copy, copyPath);
      await copy.flushed;
    } finally {
      await copy.close();
    }
    fsyncPath(join(copyPath, 'data.mdb'));
    fsyncPath(copyPath);
    const { checks, entries, tables } = await verifyCopy(copyPath, expected.entries, rotation.storeEpoch);
    return {
      dataDir, backupPath, sourceEpoch: expected.epoch, storeEpoch: rotation.storeEpoch,
      sizeBytesSource: dataFileSize(sourcePath), sizeBytes: dataFileSize(copyPath), tables, entries, rotation,
      verified: true, checks, seconds: Number(process.hrtime.bigint() - started) / 1e9,
    };
  } catch (error) {
    rmSync(createdTarget ? backupPath : copyPath, { recursive: true, force: true });
    throw error;
  }
}

async function verifyCopy(copyPath: string, expected: ReadonlyMap<string, number>, epoch: string): Promise<{ checks: VerifyCheckResult[]; entries: number; tables: number }> {
  const copy = openEnvironment(copyPath, true);
  try {
    const actual = contentsOf(copy, copyPath);
    if (actual.epoch !== epoch) throw new Error(`backup has epoch ${actual.epoch}, expected the new epoch ${epoch}`);
    let entries = 0;
    for (const name of new Set([...expected.keys(), ...actual.entries.keys()])) {
      const want = DROPPED_TABLES.has(name) ? 0 : expected.get(name);
      const got = actual.entries.get(name);
      if (want !== got) throw new Error(`backup has ${got ?? 'no'} entries in ${name}, expected ${want ?? 'none'}; the backup was removed`);
      entries += got ?? 0;
    }
    const opened = new Map<string, unknown>();
    const checks = runVerifyChecks({
      path: copyPath,
      env: copy,
      meta: readRawMeta(openTable<unknown, string>(copy, META_TABLE) as MetaTable),
      tableNames: listTableNames(copy),
      table<V, K extends string | Buffer>(name: string) {
        if (!opened.has(name)) opened.set(name, openRegisteredTable(copy, name));
        return opened.get(name) as ReturnType<typeof openRegisteredTable<V, K>>;
      },
    });
    const failed = checks.filter((check) => !check.ok);
    if (failed.length > 0) throw new Error(`the backup fails db verify (${failed.map((c) => c.name).join(', ')}); it was removed`);
    return { checks, entries, tables: actual.entries.size };
  } finally {
    await copy.close();
  }
}
