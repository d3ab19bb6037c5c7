/**
 * The raw LMDB environment: how it is opened, how a registered table is opened in it and how
 * the tables present on disk are listed. `openStore` (store/env.ts) builds on this; the `db`
 * commands use it directly so they can report on stores they would refuse to open.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type DatabaseOptions, type RootDatabase } from 'lmdb';
import type { TableSpec } from './tables.js';

export const DB_DIR_NAME = 'db';

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

export function storePath(dataDir: string): string {
  return join(dataDir, DB_DIR_NAME);
}

export function storeExists(path: string): boolean {
  return existsSync(join(path, 'data.mdb'));
}

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
