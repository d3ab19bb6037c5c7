/**
 * Sizes and entry counts of the environment and its tables, from LMDB's own statistics.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { listTableNames, openTable, type RootEnvironment } from './store.js';
import { tableSpecByName, type TableSpec } from './tables.js';

export interface TableStats {
  readonly name: string;
  /** False for a table this binary does not know (reported, opened as raw bytes). */
  readonly registered: boolean;
  readonly entries: number;
  /** Pages in use (branch + leaf + overflow) times the page size. */
  readonly sizeBytes: number;
}

export interface EnvironmentStats {
  readonly mapSize: number;
  readonly pageSize: number;
  /** Size of data.mdb on disk. */
  readonly sizeBytes: number;
}

interface LmdbTreeStats {
  readonly pageSize: number;
  readonly treeBranchPageCount: number;
  readonly treeLeafPageCount: number;
  readonly overflowPages: number;
  readonly entryCount: number;
  readonly mapSize: number;
}

export function environmentStats(env: RootEnvironment, path: string): EnvironmentStats {
  const stats = env.getStats() as LmdbTreeStats;
  return { mapSize: stats.mapSize, pageSize: stats.pageSize, sizeBytes: dataFileSize(path) };
}

export function dataFileSize(path: string): number {
  return statSync(join(path, 'data.mdb')).size;
}

export function allTableStats(env: RootEnvironment): TableStats[] {
  return listTableNames(env).map((name) => tableStats(env, name));
}

function tableStats(env: RootEnvironment, name: string): TableStats {
  const registeredSpec = tableSpecByName(name);
  const spec: TableSpec = registeredSpec ?? { name, keyEncoding: 'binary', valueEncoding: 'binary', keyLayout: 'unknown' };
  const table = openTable(env, spec);
  if (!table) throw new Error(`table ${name} is listed but does not open`);
  const stats = table.getStats() as LmdbTreeStats;
  return {
    name,
    registered: registeredSpec !== undefined,
    entries: stats.entryCount,
    sizeBytes: (stats.treeBranchPageCount + stats.treeLeafPageCount + stats.overflowPages) * stats.pageSize,
  };
}
