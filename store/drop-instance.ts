/**
 * Dropping a processor instance's tables (a deleted rebuild's replacement, store/rebuilds.ts; a deleted backfill
 * subscription's stream, store/backfill-subscriptions.ts): the tables themselves, not only their rows, so the
 * environment's named-table slots (store/store.ts MAX_TABLES) are free for new tables again. A stream kept in
 * the shared stream tables (store/stream-tables.ts) has its keys removed instead.
 *
 * LMDB table handles are shared by every thread of the process: a dropped table's handle must not be used again by
 * anyone. Callers drop an instance only once no lane writes it and no record names it any more (so no reader looks
 * it up: readers find instances through records or `processorInstances()`), and instance names are never reused.
 */
import type { Store } from './store.js';
import { clearStream, isKeyedStream, type StreamTables } from './stream-tables.js';
import { PROCESSOR_TABLE_KINDS, processorTableSpec } from './tables.js';

/** The native handle lmdb-js keeps on every Database (not in its typings): `drop` runs in the open write transaction. */
interface DroppableTable {
  readonly db: { drop(options: { justFreePages: boolean }): void };
  getKeysCount(): number;
}

/**
 * Drops every table of processor instance `instance` (the tables, not only their rows: the environment's named-table
 * slots are freed). Call inside `store.write`, with no lane of that instance running and no record left naming it;
 * the tables must be open (`store.processor(instance)`) before the write transaction. Returns the table names.
 */
export function dropInstanceTables(store: Store, instance: string): { tables: string[]; entries: number } {
  const tables = store.processor(instance);
  // A stream in the shared tables (store/stream-tables.ts) has no tables of its own: its keys go.
  if (isKeyedStream(tables)) return { tables: [], entries: clearStream(tables as unknown as StreamTables) };
  const names: string[] = [];
  let entries = 0;
  for (const kind of PROCESSOR_TABLE_KINDS) {
    const table = tables[kind] as unknown as DroppableTable;
    entries += table.getKeysCount();
    table.db.drop({ justFreePages: false });
    names.push(processorTableSpec(instance, kind).name);
  }
  return { tables: names, entries };
}

