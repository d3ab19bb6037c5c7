/**
 * Library side of the CLI's `db` commands. Each takes the data-directory write lock (so it
 * refuses while a node or another command uses the directory, with DataDirLockedError),
 * finishes any interrupted compaction, does its work and releases the lock. They never print:
 * they return data for the CLI to render, or throw.
 */
import { compactStore, type DbCompactResult } from './compact.js';
import { recoverInterruptedCompaction, removeCompactionLeftovers } from './compaction-recovery.js';
import { StoreNotFoundError } from './errors.js';
import { listTableNames, openEnvironment, openTable, storeExists, storePath, type RootEnvironment } from './store.js';
import { acquireDataDirLock } from './lock.js';
import { epochFromBytes, epochToHex, isChainId, readRawMeta, STORE_SCHEMA_VERSION, type MetaTable, type RawStoreMeta } from './meta.js';
import { allTableStats, environmentStats, type TableStats } from './stats.js';
import { META_TABLE } from './tables.js';
import { openRegisteredTable, runVerifyChecks, type VerifyCheckResult } from './verify.js';
import './verify-chain-data.js';
import './verify-consumers.js';
import './verify-cursors.js';
import { backupStore, type DbBackupResult } from './backup.js';

export { registerVerifyCheck, registeredVerifyChecks, type VerifyCheck, type VerifyCheckResult, type VerifyContext } from './verify.js';
export type { DbCompactResult } from './compact.js';
export { BackupRefusedError, type DbBackupResult } from './backup.js';
export type { TableStats } from './stats.js';

export interface DbInspectResult {
  readonly dataDir: string;
  /** 16 hex digits; null if the store's meta is missing or damaged. */
  readonly storeEpoch: string | null;
  readonly schemaVersion: number | null;
  readonly supportedSchemaVersion: number;
  readonly chainId: number | null;
  readonly createdAt: string | null;
  readonly mapSize: number;
  readonly pageSize: number;
  /** Size of data.mdb on disk. */
  readonly sizeBytes: number;
  readonly tables: readonly TableStats[];
}

export interface DbVerifyResult {
  readonly dataDir: string;
  readonly ok: boolean;
  readonly checks: readonly VerifyCheckResult[];
}

export function dbInspect(dataDir: string): Promise<DbInspectResult> {
  return withStoreUnderLock(dataDir, 'db inspect', (env, path) => {
    const meta = readMetaOf(env);
    const environment = environmentStats(env, path);
    return {
      dataDir,
      storeEpoch: epochOf(meta),
      schemaVersion: typeof meta.schemaVersion === 'number' ? meta.schemaVersion : null,
      supportedSchemaVersion: STORE_SCHEMA_VERSION,
      chainId: isChainId(meta.chainId) ? meta.chainId : null,
      createdAt: typeof meta.createdAt === 'string' ? meta.createdAt : null,
      mapSize: environment.mapSize,
      pageSize: environment.pageSize,
      sizeBytes: environment.sizeBytes,
      tables: allTableStats(env),
    };
  });
}

export function dbVerify(dataDir: string): Promise<DbVerifyResult> {
  return withStoreUnderLock(dataDir, 'db verify', (env, path) => {
    const opened = new Map<string, ReturnType<typeof openRegisteredTable>>();
    const checks = runVerifyChecks({
      path,
      env,
      meta: readMetaOf(env),
      tableNames: listTableNames(env),
      table<V, K extends string | Buffer>(name: string) {
        if (!opened.has(name)) opened.set(name, openRegisteredTable(env, name));
        return opened.get(name) as ReturnType<typeof openRegisteredTable<V, K>>;
      },
    });
    return { dataDir, ok: checks.every((check) => check.ok), checks };
  });
}

export async function dbCompact(dataDir: string): Promise<DbCompactResult> {
  const lock = acquireDataDirLock(dataDir, 'db compact');
  try {
    prepareDataDir(dataDir);
    return await compactStore(dataDir);
  } finally {
    lock.release();
  }
}

/** `db backup`: a verified, compacted, store-only copy under the write lock (store/backup.ts). */
export async function dbBackup(dataDir: string, backupPath: string): Promise<DbBackupResult> {
  const lock = acquireDataDirLock(dataDir, 'db backup');
  try {
    prepareDataDir(dataDir);
    return await backupStore(dataDir, backupPath);
  } finally {
    lock.release();
  }
}

async function withStoreUnderLock<T>(dataDir: string, holder: string, work: (env: RootEnvironment, path: string) => T): Promise<T> {
  const lock = acquireDataDirLock(dataDir, holder);
  try {
    prepareDataDir(dataDir);
    const path = storePath(dataDir);
    const env = openEnvironment(path, true);
    try {
      return work(env, path);
    } finally {
      await env.close();
    }
  } finally {
    lock.release();
  }
}

/** Finishes an interrupted compaction, then insists there is a store to work on. */
function prepareDataDir(dataDir: string): void {
  recoverInterruptedCompaction(dataDir);
  removeCompactionLeftovers(dataDir);
  if (!storeExists(storePath(dataDir))) throw new StoreNotFoundError(storePath(dataDir));
}

function readMetaOf(env: RootEnvironment): RawStoreMeta {
  const meta = openTable<unknown, string>(env, META_TABLE) as MetaTable | undefined;
  return meta ? readRawMeta(meta) : { storeEpoch: undefined, schemaVersion: undefined, chainId: undefined, createdAt: undefined };
}

function epochOf(meta: RawStoreMeta): string | null {
  const epoch = epochFromBytes(meta.storeEpoch);
  return epoch === undefined ? null : epochToHex(epoch);
}
