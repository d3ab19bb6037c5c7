/**
 * Change-log retention: removes the oldest changes of a processor instance's log, never one that a
 * `required` consumer with an active lease has not acknowledged yet (store/consumers.ts
 * `pruneFloor`). Best-effort consumers and consumers whose lease lapsed hold nothing back; when the
 * changes after their position are gone they answer `cursor_expired` and must take a snapshot.
 *
 * Used online by the `outbox` lane (the configured window, `[[processors]] retain_changes`) and
 * offline by `chain-node db prune-changes`. Only the tail is touched, and the consumer records are
 * read inside the same write transaction, so a watermark committed before the prune is honoured.
 * A group of changes (store/change-log.ts) goes only whole, once its last change is below the floor.
 */
import { logBounds, pruneFloor } from './consumers.js';
import type { Store } from './store.js';
import { changeSpans } from './change-log.js';

export interface PruneOptions {
  /** Keep at least this many of the newest changes; 0 keeps only what active leases need. */
  readonly keepNewest: number;
  readonly nowMs: number;
  /** The lowest sequence not yet published to JetStream (actors/publisher): kept, with everything after it. */
  readonly unpublishedFrom?: bigint;
  /** Upper bound of keys removed per write transaction (keeps each transaction short). */
  readonly batch?: number;
}

export interface PruneResult {
  readonly instance: string;
  /** The highest sequence ever written. */
  readonly head: string;
  /** The lowest retained sequence before and after (null: nothing retained). */
  readonly tailBefore: string | null;
  readonly tailAfter: string | null;
  readonly removed: number;
  /** The lowest sequence active required leases still need (null: no lease holds anything back). */
  readonly leaseFloor: string | null;
}

const DEFAULT_BATCH = 10_000;

export function pruneChanges(store: Store, instance: string, options: PruneOptions): PruneResult {
  const tables = store.processor(instance);
  const before = logBounds(tables);
  let removed = 0;
  let leaseFloor: bigint | null = null;
  for (;;) {
    const step = store.env.transactionSync(() => {
      const bounds = logBounds(tables);
      leaseFloor = pruneFloor(store.consumers, instance, options.nowMs);
      const windowFloor = bounds.head - BigInt(options.keepNewest) + 1n;
      const leased = leaseFloor !== null && leaseFloor < windowFloor ? leaseFloor : windowFloor;
      const floor = options.unpublishedFrom !== undefined && options.unpublishedFrom < leased ? options.unpublishedFrom : leased;
      if (bounds.tail === null || bounds.tail >= floor) return 0;
      let count = 0;
      for (const { first, count: held, key } of changeSpans(tables.changes, bounds.tail)) {
        if (first + BigInt(held) > floor || count >= (options.batch ?? DEFAULT_BATCH)) break;
        tables.changes.remove(key);
        count += held;
      }
      return count;
    });
    removed += step;
    if (step === 0) break;
  }
  const after = logBounds(tables);
  const floor = leaseFloor as bigint | null;
  return {
    instance,
    head: after.head.toString(),
    tailBefore: before.tail?.toString() ?? null,
    tailAfter: after.tail?.toString() ?? null,
    removed,
    leaseFloor: floor === null ? null : floor.toString(),
  };
}
