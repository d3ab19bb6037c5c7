/**
 * `db compact`: LMDB never shrinks its file and has no log to checkpoint, so compaction writes
 * every table's entries, in key order, into a fresh database beside the store (MDB_APPEND fills
 * each page), checks it (same epoch, same tables, same entry counts), makes it durable and swaps
 * it in. The swap and its crash recovery are described in store/compaction-recovery.ts. Must run
 * under the data-directory lock with the node stopped.
 * The copy is store/copy-entries.ts.
 */
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { fsyncPath } from './fsync-path.js';
import { join } from 'node:path';
import { COMPACT_COPY_PREFIX, PRE_COMPACT_PREFIX } from './compaction-recovery.js';
import { openEnvironment, openTable, storePath, type RootEnvironment } from './store.js';
import { copyEntries } from './copy-entries.js';
import { epochToHex, readRawMeta, validateMeta, type MetaTable } from './meta.js';
import { allTableStats, dataFileSize } from './stats.js';
import { META_TABLE } from './tables.js';

export interface DbCompactResult {
  readonly dataDir: string;
  readonly storeEpoch: string;
  readonly sizeBytesBefore: number;
  readonly sizeBytesAfter: number;
  readonly tables: number;
  readonly entries: number;
}

interface StoreContents {
  readonly epoch: string;
  readonly entriesByTable: ReadonlyMap<string, number>;
}

export async function compactStore(dataDir: string): Promise<DbCompactResult> {
  const path = storePath(dataDir);
  const stamp = Date.now();
  const copyPath = join(dataDir, `${COMPACT_COPY_PREFIX}${stamp}`);
  const setAsidePath = join(dataDir, `${PRE_COMPACT_PREFIX}${stamp}`);

  const sizeBytesBefore = dataFileSize(path);
  const source = openEnvironment(path, true);
  let expected: StoreContents;
  try {
    expected = contentsOf(source, path);
    mkdirSync(copyPath);
    await copyEntries(source, copyPath);
  } catch (error) {
    rmSync(copyPath, { recursive: true, force: true });
    throw error;
  } finally {
    await source.close();
  }
  try {
    fsyncPath(join(copyPath, 'data.mdb'));
    await checkCopyMatches(copyPath, expected);
  } catch (error) {
    rmSync(copyPath, { recursive: true, force: true });
    throw error;
  }

  renameSync(path, setAsidePath);
  fsyncPath(dataDir);
  renameSync(copyPath, path);
  fsyncPath(dataDir);
  rmSync(setAsidePath, { recursive: true, force: true });

  let entries = 0;
  for (const count of expected.entriesByTable.values()) entries += count;
  return {
    dataDir,
    storeEpoch: expected.epoch,
    sizeBytesBefore,
    sizeBytesAfter: dataFileSize(path),
    tables: expected.entriesByTable.size,
    entries,
  };
}

function contentsOf(env: RootEnvironment, path: string): StoreContents {
  const meta = openTable<unknown, string>(env, META_TABLE) as MetaTable | undefined;
  if (!meta) throw new Error(`store at ${path} has no meta table; refusing to compact it`);
  const identity = validateMeta(readRawMeta(meta), path);
  const entriesByTable = new Map(allTableStats(env).map((table) => [table.name, table.entries]));
  return { epoch: epochToHex(identity.epoch), entriesByTable };
}

async function checkCopyMatches(copyPath: string, expected: StoreContents): Promise<void> {
  const copy = openEnvironment(copyPath, true);
  try {
    const actual = contentsOf(copy, copyPath);
    if (actual.epoch !== expected.epoch) throw new Error(`compacted copy has epoch ${actual.epoch}, expected ${expected.epoch}`);
    const names = new Set([...expected.entriesByTable.keys(), ...actual.entriesByTable.keys()]);
    for (const name of names) {
      const want = expected.entriesByTable.get(name);
      const got = actual.entriesByTable.get(name);
      if (want !== got) throw new Error(`compacted copy has ${got ?? 'no'} entries in ${name}, expected ${want ?? 'none'}; the database was left untouched`);
    }
  } finally {
    await copy.close();
  }
}

