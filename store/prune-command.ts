/**
 * `chain-node db prune-changes --data-dir DIR [--keep N]`: with the data-directory write lock held
 * (the node must be stopped), prunes every processor instance's change log down to the newest
 * `keep` changes (default 0), never below what a `required` consumer with an active lease has
 * not acknowledged (store/prune-changes.ts).
 */
import { openStore } from './store.js';
import { storeExists, storePath } from './store.js';
import { StoreNotFoundError } from './errors.js';
import { acquireDataDirLock } from './lock.js';
import { pruneChanges, type PruneResult } from './prune-changes.js';

export interface DbPruneChangesResult {
  readonly dataDir: string;
  readonly keep: number;
  readonly processors: readonly PruneResult[];
}

export async function dbPruneChanges(dataDir: string, keep = 0): Promise<DbPruneChangesResult> {
  if (!Number.isSafeInteger(keep) || keep < 0) throw new RangeError(`--keep must be a non-negative integer, got ${keep}`);
  const lock = acquireDataDirLock(dataDir, 'db prune-changes');
  try {
    if (!storeExists(storePath(dataDir))) throw new StoreNotFoundError(storePath(dataDir));
    const store = openStore({ dataDir });
    try {
      const nowMs = Date.now();
      return { dataDir, keep, processors: store.processorInstances().map((instance) => pruneChanges(store, instance, { keepNewest: keep, nowMs })) };
    } finally {
      await store.close();
    }
  } finally {
    lock.release();
  }
}
