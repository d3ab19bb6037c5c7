/**
 * The registry of every LMDB sub-database (table) in the store: its name, key layout and
 * value encoding. Every table is opened through this registry so that all threads agree
 * on encodings, and `db inspect` / `db verify` can list and check what is on disk.
 *
 * Key layout ("u64" = 8-byte big-endian unsigned, "hash" = 32 raw bytes):
 *
 *   meta                      string name                 → msgpack value (see store/meta.ts)
 *   chain.headers             u64 (block number) ‖ hash   → RLP header bytes (stores of earlier versions: hash keys too)
 *   chain.bodies              u64 (block number) ‖ hash   → RLP body bytes (transactions, ommers, withdrawals)
 *   chain.receipts            u64 (block number) ‖ hash   → encoded receipts of the block (store/chain-material.ts)
 *   chain.canonical           u64 (block number)          → hash of the canonical block at that height
 *   chain.hashToNumber        hash (block hash)           → u64 block number
 *   chain.journal             u64 (journal sequence)      → move (see store/journal.ts)
 *   chain.txIndex             hash (transaction hash)     → canonical block hash (32) ‖ u32 index in the block (see store/tx-index.ts)
 *   consumers                 string consumer id          → msgpack consumer record (owned by outbox)
 *   snapshots                 string snapshot id          → msgpack snapshot record (query-and-follow)
 *   snapshot.rows             12-byte snapshot id ‖ u32   → one materialized entity result (JSON bytes), by row ordinal
 *   jobs                      string job id               → msgpack history-job record
 *   devnet.blocks             u64 (block number)          → msgpack devnet block with its generator state (only
 *                                                           with the devnet source: created on first use)
 *   finality.lightClient      string name ("store")       → msgpack light-client store record (owned by the
 *                                                           finality lane with a checkpoint root: created on first use)
 *   history.canonical         u64 (block number)          → block hash (32) ‖ parent hash (32) of a finalized block below
 *                                                           chain.canonical, proven canonical by the history lane
 *                                                           (store/history-canonical.ts; created on first use)
 *
 * Per processor instance (opened on demand, owned by that instance's writer only):
 *
 *   p.<instance>.entities     processor-defined bytes     → pre-rendered entity row bytes
 *   p.<instance>.changes      u64 (first change sequence) → a group of changes (store/change-log.ts)
 *   p.<instance>.coverage     u64 (first block of range)  → msgpack coverage record
 *   p.<instance>.checkpoints  u64 (change sequence)       → msgpack recovery-checkpoint record
 *   p.<instance>.savepoints   string savepoint id         → msgpack savepoint record
 *   p.<instance>.artifacts    u64 (block number) ‖ bytes  → artifact bytes
 *   p.<instance>.state        processor-defined bytes     → processor private state bytes
 *
 * No table is compressed: hot tables serve their bytes straight from the memory map.
 */

/** `binary`: keys are Buffers compared bytewise. `string`: UTF-8 keys (ordered-binary). */
export type KeyEncoding = 'binary' | 'string';
/** `binary`: values are raw Buffers. `msgpack`: values are msgpack-encoded records. */
export type ValueEncoding = 'binary' | 'msgpack';

export interface TableSpec {
  readonly name: string;
  readonly keyEncoding: KeyEncoding;
  readonly valueEncoding: ValueEncoding;
  /** Every key has exactly this many bytes (checked by `db verify`); undefined when keys vary. */
  readonly keyWidth?: number;
  /** Every key has one of these many bytes (checked by `db verify`): a table whose key layout changed between versions. */
  readonly keyWidths?: readonly number[];
  /** A key that starts with a u64 in big-endian order (checked: at least 8 bytes). */
  readonly keyStartsWithU64?: boolean;
  readonly keyLayout: string;
}

export const META_TABLE: TableSpec = { name: 'meta', keyEncoding: 'string', valueEncoding: 'msgpack', keyLayout: 'string name' };

export const CHAIN_TABLES = {
  headers: { name: 'chain.headers', keyEncoding: 'binary', valueEncoding: 'binary', keyWidths: [40, 32], keyLayout: 'u64 block number ‖ block hash (earlier versions: block hash)' },
  bodies: { name: 'chain.bodies', keyEncoding: 'binary', valueEncoding: 'binary', keyWidths: [40, 32], keyLayout: 'u64 block number ‖ block hash (earlier versions: block hash)' },
  receipts: { name: 'chain.receipts', keyEncoding: 'binary', valueEncoding: 'binary', keyWidths: [40, 32], keyLayout: 'u64 block number ‖ block hash (earlier versions: block hash)' },
  canonical: { name: 'chain.canonical', keyEncoding: 'binary', valueEncoding: 'binary', keyWidth: 8, keyLayout: 'u64 block number' },
  hashToNumber: { name: 'chain.hashToNumber', keyEncoding: 'binary', valueEncoding: 'binary', keyWidth: 32, keyLayout: 'block hash' },
  journal: { name: 'chain.journal', keyEncoding: 'binary', valueEncoding: 'binary', keyWidth: 8, keyLayout: 'u64 journal sequence' },
  txIndex: { name: 'chain.txIndex', keyEncoding: 'binary', valueEncoding: 'binary', keyWidth: 32, keyLayout: 'transaction hash' },
} as const satisfies Record<string, TableSpec>;

export const SHARED_TABLES = {
  consumers: { name: 'consumers', keyEncoding: 'string', valueEncoding: 'msgpack', keyLayout: 'string consumer id' },
  snapshots: { name: 'snapshots', keyEncoding: 'string', valueEncoding: 'msgpack', keyLayout: 'string snapshot id' },
  snapshotRows: { name: 'snapshot.rows', keyEncoding: 'binary', valueEncoding: 'binary', keyWidth: 16, keyLayout: '12-byte snapshot id ‖ u32 row ordinal' },
  jobs: { name: 'jobs', keyEncoding: 'string', valueEncoding: 'msgpack', keyLayout: 'string job id' },
} as const satisfies Record<string, TableSpec>;

/** Tables a lane creates on first use; a store without them is complete. */
export const OPTIONAL_TABLES = {
  devnetBlocks: { name: 'devnet.blocks', keyEncoding: 'binary', valueEncoding: 'msgpack', keyWidth: 8, keyLayout: 'u64 block number' },
  finalityLightClient: { name: 'finality.lightClient', keyEncoding: 'string', valueEncoding: 'msgpack', keyLayout: 'string name' },
  historyCanonical: { name: 'history.canonical', keyEncoding: 'binary', valueEncoding: 'binary', keyWidth: 8, keyLayout: 'u64 block number' },
} as const satisfies Record<string, TableSpec>;

/** Tables that exist in every store, created when the store is created. */
export const FIXED_TABLES: readonly TableSpec[] = [META_TABLE, ...Object.values(CHAIN_TABLES), ...Object.values(SHARED_TABLES)];

type ProcessorTableShape = Omit<TableSpec, 'name'>;

export const PROCESSOR_TABLE_SHAPES = {
  entities: { keyEncoding: 'binary', valueEncoding: 'binary', keyLayout: 'processor-defined bytes' },
  changes: { keyEncoding: 'binary', valueEncoding: 'binary', keyWidth: 8, keyLayout: 'u64 change sequence' },
  coverage: { keyEncoding: 'binary', valueEncoding: 'msgpack', keyWidth: 8, keyLayout: 'u64 first block of range' },
  checkpoints: { keyEncoding: 'binary', valueEncoding: 'msgpack', keyWidth: 8, keyLayout: 'u64 change sequence' },
  savepoints: { keyEncoding: 'string', valueEncoding: 'msgpack', keyLayout: 'string savepoint id' },
  artifacts: { keyEncoding: 'binary', valueEncoding: 'binary', keyStartsWithU64: true, keyLayout: 'u64 block number ‖ bytes' },
  state: { keyEncoding: 'binary', valueEncoding: 'binary', keyLayout: 'processor-defined bytes' },
  /**
   * Ordered-state kinds: the inverse of every state write of an unfinalized block, replayed in reverse by undo;
   * one record a block (16-byte keys), or one a write in stores of earlier versions (12-byte keys): store/undo-records.ts.
   */
  undo: { keyEncoding: 'binary', valueEncoding: 'binary', keyWidths: [16, 12], keyStartsWithU64: true, keyLayout: 'u64 block number ‖ u32 0xffffffff ‖ u32 count of inverses (earlier versions: u64 block number ‖ u32 write ordinal)' },
} as const satisfies Record<string, ProcessorTableShape>;

export type ProcessorTableKind = keyof typeof PROCESSOR_TABLE_SHAPES;
export const PROCESSOR_TABLE_KINDS = Object.keys(PROCESSOR_TABLE_SHAPES) as ProcessorTableKind[];

/**
 * Backfill-subscription streams (store/stream-tables.ts): one shared table per processor table kind, created with the
 * first stream, every key `stream instance ‖ 0x00 ‖ the instance table's key` (string keys: `stream instance/key`).
 */
export const STREAM_TABLES = Object.fromEntries(PROCESSOR_TABLE_KINDS.map((kind) => {
  const { keyEncoding, valueEncoding, keyLayout } = PROCESSOR_TABLE_SHAPES[kind];
  const spec: TableSpec = { name: `s.${kind}`, keyEncoding, valueEncoding, keyLayout: `stream instance ‖ ${keyEncoding === 'string' ? '"/"' : '0x00'} ‖ ${keyLayout}` };
  return [kind, spec];
})) as Readonly<Record<ProcessorTableKind, TableSpec>>;

const PROCESSOR_PREFIX = 'p.';
/** URL-safe, because instance ids appear in paths such as /v1/processors/{instance}. */
const INSTANCE_ID = /^[A-Za-z0-9][A-Za-z0-9._~@:+-]{0,127}$/;

export function assertProcessorInstanceId(instance: string): void {
  if (!INSTANCE_ID.test(instance)) {
    throw new RangeError(
      `processor instance id ${JSON.stringify(instance.slice(0, 140))} is not valid: use 1-128 characters from A-Z a-z 0-9 . _ ~ @ : + - starting with a letter or digit`,
    );
  }
}

export function processorTableSpec(instance: string, kind: ProcessorTableKind): TableSpec {
  assertProcessorInstanceId(instance);
  return { name: `${PROCESSOR_PREFIX}${instance}.${kind}`, ...PROCESSOR_TABLE_SHAPES[kind] };
}

/** The spec of a table found on disk, or undefined when the name is not one this binary knows. */
export function tableSpecByName(name: string): TableSpec | undefined {
  const fixed = [...FIXED_TABLES, ...Object.values(OPTIONAL_TABLES), ...Object.values(STREAM_TABLES)].find((spec) => spec.name === name);
  if (fixed) return fixed;
  const parsed = parseProcessorTableName(name);
  return parsed ? processorTableSpec(parsed.instance, parsed.kind) : undefined;
}

export function parseProcessorTableName(name: string): { instance: string; kind: ProcessorTableKind } | undefined {
  if (!name.startsWith(PROCESSOR_PREFIX)) return undefined;
  const lastDot = name.lastIndexOf('.');
  const instance = name.slice(PROCESSOR_PREFIX.length, lastDot);
  const kind = name.slice(lastDot + 1);
  if (!isProcessorTableKind(kind) || !INSTANCE_ID.test(instance)) return undefined;
  return { instance, kind };
}

function isProcessorTableKind(kind: string): kind is ProcessorTableKind {
  return Object.hasOwn(PROCESSOR_TABLE_SHAPES, kind);
}
