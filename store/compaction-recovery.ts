/**
 * Names and crash recovery of `db compact` (store/compact.ts). The swap is two renames:
 *
 *   1. <dataDir>/db                 → <dataDir>/db.pre-compact-<ts>   (old database set aside)
 *   2. <dataDir>/db.compact-<ts>    → <dataDir>/db                    (verified compacted copy in place)
 *   3. <dataDir>/db.pre-compact-<ts> removed
 *
 * A crash can leave these states, each with a complete database somewhere:
 *
 *   - before 1: `db` intact; a `db.compact-*` copy may be partial        → delete the copy
 *   - between 1 and 2: no `db`; `db.pre-compact-*` is the old database  → rename it back to `db`
 *   - between 2 and 3: `db` is the verified copy; `db.pre-compact-*`
 *     (possibly half deleted) is the old one                           → delete it
 *
 * `recoverInterruptedCompaction` handles the only dangerous state (no `db`) and runs before
 * every write-mode open, so a crashed compaction can never make the node create a fresh, empty
 * store with a new epoch. `removeCompactionLeftovers` handles the other two and runs under the
 * data-directory lock in the `db` commands.
 */
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DB_DIR_NAME, storeExists, storePath } from './store-paths.js';

export const COMPACT_COPY_PREFIX = `${DB_DIR_NAME}.compact-`;
export const PRE_COMPACT_PREFIX = `${DB_DIR_NAME}.pre-compact-`;

/** If a compaction died between its two renames, puts the old database back. Returns what it restored. */
export function recoverInterruptedCompaction(dataDir: string): string | undefined {
  const path = storePath(dataDir);
  if (storeExists(path)) return undefined;
  const setAside = entriesWithPrefix(dataDir, PRE_COMPACT_PREFIX)
    .filter((name) => storeExists(join(dataDir, name)))
    .sort(byTimestampSuffix);
  const newest = setAside.at(-1);
  if (newest === undefined) return undefined;
  // An environment directory without data.mdb holds nothing (at most a lock file).
  if (existsSync(path)) rmSync(path, { recursive: true, force: true });
  try {
    renameSync(join(dataDir, newest), path);
  } catch (error) {
    // Another thread of this process restored it first.
    if (!storeExists(path)) throw error;
  }
  return newest;
}

/** Removes partial compacted copies and set-aside databases, once `db` is in place. Returns their names. */
export function removeCompactionLeftovers(dataDir: string): string[] {
  if (!storeExists(storePath(dataDir))) return [];
  const leftovers = [...entriesWithPrefix(dataDir, COMPACT_COPY_PREFIX), ...entriesWithPrefix(dataDir, PRE_COMPACT_PREFIX)];
  for (const name of leftovers) rmSync(join(dataDir, name), { recursive: true, force: true });
  return leftovers;
}

function entriesWithPrefix(dataDir: string, prefix: string): string[] {
  if (!existsSync(dataDir)) return [];
  return readdirSync(dataDir).filter((name) => name.startsWith(prefix));
}

function byTimestampSuffix(a: string, b: string): number {
  return timestampSuffix(a) - timestampSuffix(b);
}

function timestampSuffix(name: string): number {
  const suffix = Number(name.slice(name.lastIndexOf('-') + 1));
  return Number.isFinite(suffix) ? suffix : 0;
}
