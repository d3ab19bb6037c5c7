/**
 * The one module that opens the store. `openStore`: the one LMDB environment of a data directory (`<dataDir>/db`) with its meta
 * record checked and its tables opened through typed accessors. Table key layouts are listed
 * in store/tables.ts.
 *
 * The same store may be opened from several worker threads of one process (lmdb-js shares the
 * native environment between them). The data-directory write lock (store/lock.ts) is the
 * caller's business: the node's root takes it once per process, the `db` commands take it too.
 */
import { open, type Database, type DatabaseOptions, type RootDatabase } from 'lmdb';
import { recoverInterruptedCompaction } from './compaction-recovery.js';
import { StoreChainMismatchError, StoreNotFoundError, StoreTableMissingError } from './errors.js';
import { storeExists, storePath } from './store-paths.js';
import { ensureMeta, readRawMeta, validateMeta, type MetaTable, type StoreMeta } from './meta.js';
import { isStreamInstance, listStreams, openStreamTables, type OpenShared } from './stream-tables.js';
import {
  CHAIN_TABLES,
  META_TABLE,
  parseProcessorTableName,
  processorTableSpec,
  SHARED_TABLES,
  OPTIONAL_TABLES,
  STREAM_TABLES,
  type ProcessorTableKind,
  type TableSpec,
} from './tables.js';

export { STORE_SCHEMA_VERSION } from './meta.js';
export { DB_DIR_NAME, storeExists, storePath } from './store-paths.js';


/**
 * Initial address space reserved for the memory map. It is virtual memory, not disk: the file
 * grows as data is written, and lmdb-js enlarges the map by itself when a write needs more.
 */
export const INITIAL_MAP_SIZE = 64 * 1024 ** 3;
/** Several hundred named tables: a fixed dozen plus seven per processor instance. */
export const MAX_TABLES = 512;
/** One reader slot per concurrent read transaction across every worker thread of the node. */
const MAX_READERS = 1024;

export type RootEnvironment = RootDatabase<Buffer, Buffer>;


/** Opens the environment at `path`. The root database is only used to list table names. */
export function openEnvironment(path: string, readOnly: boolean): RootEnvironment {
  return open<Buffer, Buffer>({
    path,
    // lmdb-js would treat a path with a dot in its last segment (db.compact-…) as a file name.
    noSubdir: false,
    maxDbs: MAX_TABLES,
    maxReaders: MAX_READERS,
    mapSize: INITIAL_MAP_SIZE,
    readOnly,
    keyEncoding: 'binary',
    encoding: 'binary',
  });
}

/**
 * Opens a registered table. In write mode a missing table is created; in read-only mode a
 * missing table yields undefined.
 */
export function openTable<V, K extends string | Buffer>(env: RootEnvironment, spec: TableSpec): Database<V, K> | undefined {
  const options: DatabaseOptions & { name: string } & Record<string, unknown> = {
    name: spec.name,
    keyEncoding: spec.keyEncoding === 'binary' ? 'binary' : 'ordered-binary',
    encoding: spec.valueEncoding,
    compression: false,
    cache: false,
  };
  if (spec.valueEncoding === 'msgpack') {
    // Self-describing records (no shared structure table), and bigints round-trip losslessly.
    options['useRecords'] = false;
    options['useBigIntExtension'] = true;
  }
  return (env.openDB<V, K>(options) as Database<V, K> | undefined) ?? undefined;
}

/** Names of every named table present in the environment, in byte order. */
export function listTableNames(env: RootEnvironment): string[] {
  const names: string[] = [];
  for (const key of env.getKeys()) {
    // LMDB stores sub-database names in the root database with a trailing NUL.
    const name = Buffer.from(key).toString('utf8').replace(/\0$/, '');
    names.push(name);
  }
  return names;
}

export interface OpenStoreOptions {
  readonly dataDir: string;
  /** The chain this node serves; recorded on first open, refused if the store holds another chain. */
  readonly chainId?: number;
  /** Open without creating anything; the store must exist. */
  readonly readOnly?: boolean;
}

/** Raw bytes in, raw bytes out; keys are Buffers compared bytewise. */
export type BinaryTable = Database<Buffer, Buffer>;
/** msgpack-encoded records under binary keys; the owning lane narrows the record type. */
export type BinaryKeyedRecordTable = Database<unknown, Buffer>;
/** msgpack-encoded records under string keys. */
export type StringKeyedRecordTable = Database<unknown, string>;

export interface ChainTables {
  readonly headers: BinaryTable;
  readonly bodies: BinaryTable;
  readonly receipts: BinaryTable;
  readonly canonical: BinaryTable;
  readonly hashToNumber: BinaryTable;
  readonly journal: BinaryTable;
  /** Canonical transactions by hash (written by the chain lane with each journal move). */
  readonly txIndex: BinaryTable;
}

export interface ProcessorTables {
  readonly instance: string;
  readonly entities: BinaryTable;
  readonly changes: BinaryTable;
  readonly coverage: BinaryKeyedRecordTable;
  readonly checkpoints: BinaryKeyedRecordTable;
  readonly savepoints: StringKeyedRecordTable;
  readonly artifacts: BinaryTable;
  readonly state: BinaryTable;
  /** Inverse writes of unfinalized blocks (ordered-state kinds; see actors/kinds/sdk/state.ts). */
  readonly undo: BinaryTable;
}

export interface Store {
  readonly env: RootEnvironment;
  readonly dataDir: string;
  /** The environment directory, `<dataDir>/db`. */
  readonly path: string;
  readonly readOnly: boolean;
  readonly epoch: bigint;
  readonly schemaVersion: number;
  /** null until a node that names its chain has opened the store. */
  readonly chainId: number | null;
  readonly createdAt: string;
  readonly meta: MetaTable;
  readonly chain: ChainTables;
  readonly consumers: StringKeyedRecordTable;
  readonly snapshots: StringKeyedRecordTable;
  /** Materialized query-and-follow rows (store/snapshots.ts). */
  readonly snapshotRows: BinaryTable;
  readonly jobs: StringKeyedRecordTable;
  /** The devnet source's blocks with their generator state (store/devnet-blocks.ts), created on first use. */
  devnetBlocks(): Database<unknown, Buffer>;
  /** The finality lane's light-client store (store/light-client-store.ts), created on first use. */
  finalityLightClient(): Database<unknown, string>;
  /** The history lane's proven-canonical hashes below chain.canonical (store/history-canonical.ts); undefined while a read-only store lacks it. */
  historyCanonical(): BinaryTable | undefined;
  /** The tables of one processor instance, created on first use (read-only: must exist). */
  processor(instance: string): ProcessorTables;
  /** Instances that have tables in this store (backfill-subscription streams included). */
  processorInstances(): string[];
  /** A shared stream table (store/stream-tables.ts), undefined when a read-only store has none yet. */
  streamTable(kind: ProcessorTableKind): Database<unknown, Buffer | string> | undefined;
  /** Forgets this thread's handles of an instance whose tables were dropped (store/rebuilds.ts dropInstanceTables). */
  forgetProcessor(instance: string): void;
  /** Every table present on disk. */
  tableNames(): string[];
  /**
   * Runs `action` in one atomic write transaction, queued with the other asynchronous writes: when
   * it throws, nothing it wrote is committed. (lmdb-js's plain asynchronous `transaction` commits
   * what the callback wrote before it threw; a child transaction is aborted instead.)
   */
  write<T>(action: () => T): Promise<T>;
  close(): Promise<void>;
}

export function openStore(opts: OpenStoreOptions): Store {
  const readOnly = opts.readOnly ?? false;
  const path = storePath(opts.dataDir);
  if (!readOnly) recoverInterruptedCompaction(opts.dataDir);
  if (readOnly && !storeExists(path)) throw new StoreNotFoundError(path);

  const env = openEnvironment(path, readOnly);
  try {
    const table = <V, K extends string | Buffer>(spec: TableSpec): Database<V, K> => {
      const db = openTable<V, K>(env, spec);
      if (!db) throw readOnly && !storeHasMeta(env) ? new StoreNotFoundError(path) : new StoreTableMissingError(path, spec.name);
      return db;
    };
    const meta = table<unknown, string>(META_TABLE);
    const hasOtherTables = listTableNames(env).some((name) => name !== META_TABLE.name);
    const identity = readOnly ? validateMeta(readRawMeta(meta), path) : ensureMeta(meta, path, opts.chainId, hasOtherTables);
    if (readOnly && opts.chainId !== undefined) ensureMetaChainMatches(identity, path, opts.chainId);
    return buildStore(env, opts.dataDir, path, readOnly, identity, meta, table);
  } catch (error) {
    void env.close();
    throw error;
  }
}

function buildStore(
  env: RootEnvironment,
  dataDir: string,
  path: string,
  readOnly: boolean,
  identity: StoreMeta,
  meta: MetaTable,
  table: <V, K extends string | Buffer>(spec: TableSpec) => Database<V, K>,
): Store {
  const chain: ChainTables = {
    headers: table(CHAIN_TABLES.headers),
    bodies: table(CHAIN_TABLES.bodies),
    receipts: table(CHAIN_TABLES.receipts),
    canonical: table(CHAIN_TABLES.canonical),
    hashToNumber: table(CHAIN_TABLES.hashToNumber),
    journal: table(CHAIN_TABLES.journal),
    txIndex: table(CHAIN_TABLES.txIndex),
  };
  const processors = new Map<string, ProcessorTables>();
  let devnetBlocks: Database<unknown, Buffer> | undefined;
  let finalityLightClient: Database<unknown, string> | undefined;
  let historyCanonical: BinaryTable | undefined;
  // The shared stream tables: opened once per thread, created with the first stream (absent from read-only stores before it).
  const sharedStreamTables = new Map<string, Database<unknown, Buffer | string>>();
  const openShared: OpenShared = (kind) => {
    const spec = STREAM_TABLES[kind];
    let db = sharedStreamTables.get(spec.name);
    if (db === undefined && (!readOnly || listTableNames(env).includes(spec.name))) {
      db = table<unknown, Buffer | string>(spec);
      sharedStreamTables.set(spec.name, db);
    }
    return db;
  };
  // A stream an earlier version kept in tables of its own is read there until the node migrates it (store/stream-tables.ts).
  const hasOwnTables = (instance: string) => listTableNames(env).includes(processorTableSpec(instance, 'changes').name);
  const openProcessor = (instance: string): ProcessorTables => {
    if (isStreamInstance(instance) && !hasOwnTables(instance)) return openStreamTables(openShared, instance) as unknown as ProcessorTables;
    return openOwnTables(instance);
  };
  const openOwnTables = (instance: string): ProcessorTables => {
    const of = <V, K extends string | Buffer>(kind: ProcessorTableKind) => table<V, K>(processorTableSpec(instance, kind));
    return {
      instance,
      entities: of('entities'),
      changes: of('changes'),
      coverage: of('coverage'),
      checkpoints: of('checkpoints'),
      savepoints: of('savepoints'),
      artifacts: of('artifacts'),
      state: of('state'),
      undo: of('undo'),
    };
  };
  return {
    env,
    dataDir,
    path,
    readOnly,
    epoch: identity.epoch,
    schemaVersion: identity.schemaVersion,
    chainId: identity.chainId,
    createdAt: identity.createdAt,
    meta,
    chain,
    consumers: table(SHARED_TABLES.consumers),
    snapshots: table(SHARED_TABLES.snapshots),
    snapshotRows: table(SHARED_TABLES.snapshotRows),
    jobs: table(SHARED_TABLES.jobs),
    devnetBlocks: () => (devnetBlocks ??= table(OPTIONAL_TABLES.devnetBlocks)),
    finalityLightClient: () => (finalityLightClient ??= table(OPTIONAL_TABLES.finalityLightClient)),
    historyCanonical: () => {
      if (historyCanonical === undefined && (!readOnly || listTableNames(env).includes(OPTIONAL_TABLES.historyCanonical.name))) {
        historyCanonical = table(OPTIONAL_TABLES.historyCanonical);
      }
      return historyCanonical;
    },
    processor(instance) {
      let tables = processors.get(instance);
      if (!tables) {
        tables = openProcessor(instance);
        processors.set(instance, tables);
      }
      return tables;
    },
    forgetProcessor(instance) {
      processors.delete(instance);
    },
    processorInstances() {
      const instances = new Set<string>(listStreams(openShared));
      for (const name of listTableNames(env)) {
        const parsed = parseProcessorTableName(name);
        if (parsed) instances.add(parsed.instance);
      }
      return [...instances].sort();
    },
    streamTable: openShared,
    tableNames: () => listTableNames(env),
    write: (action) => env.childTransaction(action),
    close: () => env.close(),
  };
}

function storeHasMeta(env: RootEnvironment): boolean {
  return listTableNames(env).includes(META_TABLE.name);
}

/** A read-only open cannot record the chain, but it still refuses a store of another chain. */
function ensureMetaChainMatches(identity: StoreMeta, path: string, chainId: number): void {
  if (identity.chainId !== null && identity.chainId !== chainId) throw new StoreChainMismatchError(path, identity.chainId, chainId);
}
