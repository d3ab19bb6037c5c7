/**
 * Where backfill-subscription streams live: each stream is a pseudo-instance (`bs~…`, store/backfill-subscriptions.ts)
 * whose tables are keyed views (store/keyed-table.ts) over the shared `s.<kind>` tables (store/tables.ts
 * STREAM_TABLES), so a store holds as many streams as its disk allows — not one set of named tables each, which
 * LMDB's limit of 512 named tables capped at 32 streams. Deleting a stream removes its keys.
 *
 * Stores of earlier versions hold streams in tables of their own (`p.bs~….changes`, …): `migrateStreamTables` copies
 * each into the shared tables and drops its own in one write transaction (run by the node before its lanes start; a
 * crash before the commit leaves the stream where it was, and the next start migrates it). Until then such a stream
 * is read from its own tables.
 */
import type { Database } from 'lmdb';
import { KeyedTable, ownerRange } from './keyed-table.js';
import { parseProcessorTableName, PROCESSOR_TABLE_KINDS, STREAM_TABLES, type ProcessorTableKind } from './tables.js';

/** The shape of an instance's tables (store/store.ts ProcessorTables), kept free of store.ts's imports. */
export type StreamTables = { readonly instance: string } & Readonly<Record<ProcessorTableKind, unknown>>;

/** Opens the shared table of a kind (creating it when the store is writable); undefined when a read-only store lacks it. */
export type OpenShared = (kind: ProcessorTableKind) => Database<unknown, Buffer | string> | undefined;

/** The stream pseudo-instance of a subscription id (`bs-…` → `bs~…`): a valid instance id no configured processor takes. */
export function streamInstance(id: string): string {
  return `bs~${id.slice(3)}`;
}

export function isStreamInstance(instance: string): boolean {
  return instance.startsWith('bs~');
}

/** One stream's tables as keyed views; a read-only store without the shared tables (no stream yet) gives empty ones. */
export function openStreamTables(open: OpenShared, stream: string): StreamTables {
  const tables: Record<string, unknown> = { instance: stream };
  for (const kind of PROCESSOR_TABLE_KINDS) tables[kind] = viewOf(open, kind, stream);
  return tables as StreamTables;
}

function viewOf(open: OpenShared, kind: ProcessorTableKind, stream: string): KeyedTable | EmptyTable {
  const shared = open(kind);
  return shared ? new KeyedTable(shared, stream, ownerRange(stream, STREAM_TABLES[kind].keyEncoding)) : EMPTY;
}

/** What a view over a table that does not exist reads: nothing. */
class EmptyTable {
  get(): undefined { return undefined; }
  getBinary(): undefined { return undefined; }
  getBinaryFast(): undefined { return undefined; }
  *getRange(): Generator<never> { /* no entries */ }
  *getKeys(): Generator<never> { /* no keys */ }
  getKeysCount(): number { return 0; }
  clear(): number { return 0; }
}
const EMPTY = new EmptyTable();

/** Removes every key of a stream from the shared tables (inside a write transaction); returns how many there were. */
export function clearStream(tables: StreamTables): number {
  let entries = 0;
  for (const kind of PROCESSOR_TABLE_KINDS) entries += (tables[kind] as KeyedTable | EmptyTable).clear();
  return entries;
}

export function isKeyedStream(tables: { readonly entities: unknown }): boolean {
  return tables.entities instanceof KeyedTable || tables.entities instanceof EmptyTable;
}

/** The streams the shared tables hold, by the progress record every stream writes at its creation (`s.state`). */
export function listStreams(open: OpenShared): string[] {
  const state = open('state');
  if (!state) return [];
  const streams: string[] = [];
  let from: Buffer | undefined;
  for (;;) {
    let found: string | undefined;
    for (const key of state.getKeys(from ? { start: from, limit: 1 } : { limit: 1 })) {
      const bytes = key as Buffer;
      found = bytes.subarray(0, bytes.indexOf(0)).toString('latin1');
    }
    if (found === undefined) return streams;
    streams.push(found);
    from = ownerRange(found, 'binary').end as Buffer;
  }
}

/**
 * Copies the streams kept in tables of their own (an earlier version's layout) into the shared tables and drops their
 * own, one stream per write transaction. `ownTables` opens a stream's own tables (outside the write: LMDB opens named
 * tables outside write transactions); `drop` drops them inside it (store/drop-instance.ts). Returns the streams moved.
 */
export async function migrateStreamTables(options: {
  readonly streams: readonly string[];
  readonly open: OpenShared;
  readonly ownTables: (stream: string) => StreamTables;
  readonly drop: (stream: string) => void;
  readonly write: (action: () => void) => Promise<unknown>;
}): Promise<string[]> {
  for (const stream of options.streams) {
    const own = options.ownTables(stream);
    const shared = openStreamTables(options.open, stream);
    await options.write(() => {
      for (const kind of PROCESSOR_TABLE_KINDS) {
        const from = own[kind] as Database<unknown, Buffer | string>;
        const to = shared[kind] as KeyedTable;
        for (const { key, value } of from.getRange({})) void to.put(key as Buffer | string, Buffer.isBuffer(value) ? Buffer.from(value) : value);
      }
      options.drop(stream);
    });
  }
  return [...options.streams];
}

/** An instance's change log, progress and coverage, as a store read by table name sees them (db verify, epoch rotation). */
export interface InstanceLog {
  readonly instance: string;
  readonly changes: Database<Buffer, Buffer> | undefined;
  readonly state: Database<Buffer, Buffer> | undefined;
  readonly coverage: Database<unknown, Buffer> | undefined;
}

/**
 * Every instance's log in a store opened by table name: instances with tables of their own, then the streams the
 * shared stream tables hold (as keyed views, which read and write like the tables of their own).
 */
export function instanceLogs(tableNames: readonly string[], table: (name: string) => Database<unknown, Buffer | string> | undefined): InstanceLog[] {
  const own = [...new Set(tableNames.map(parseProcessorTableName).filter((p) => p !== undefined).map((p) => p.instance))];
  const logs: InstanceLog[] = own.map((instance) => ({
    instance,
    changes: table(`p.${instance}.changes`) as Database<Buffer, Buffer> | undefined,
    state: table(`p.${instance}.state`) as Database<Buffer, Buffer> | undefined,
    coverage: table(`p.${instance}.coverage`) as Database<unknown, Buffer> | undefined,
  }));
  const open: OpenShared = (kind) => (tableNames.includes(STREAM_TABLES[kind].name) ? table(STREAM_TABLES[kind].name) : undefined);
  for (const stream of listStreams(open)) {
    const views = openStreamTables(open, stream);
    logs.push({
      instance: stream,
      changes: views.changes as Database<Buffer, Buffer>,
      state: views.state as Database<Buffer, Buffer>,
      coverage: views.coverage as Database<unknown, Buffer>,
    });
  }
  return logs;
}
