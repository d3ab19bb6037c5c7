/**
 * Processor rebuilds (spec §9.5) in the `jobs` table, written by the history lane (actors/history/rebuilds.ts) —
 * except `serving:<processor>`, which the outbox writes in the transaction that moves the processor's consumers
 * (actors/outbox/consumer-move.ts), so the serving instance and the consumers' instance never disagree. Keys:
 *   `rebuild:<id>`               → the rebuild record
 *   `rebuild-key:<key>`          → the id of the rebuild created with that idempotency key
 *   `rebuild-instance:<instance>`→ the id of the rebuild whose replacement that instance is
 *   `serving:<processor>`        → the instance that serves the processor's queries and consumers (absent: the configured one)
 */
import type { Store } from './env.js';
import type { JobError } from './history-jobs.js';

/**
 * `backfilling`: the replacement instance is rebuilt (queries of it answer 409 `processor_rebuilding`);
 * `comparing`: it caught up and its outputs are compared with the serving instance's;
 * `ready`: compared, waiting for the operator to promote it; `promoted`: it serves the processor;
 * `rolled_back`: promoted, then the previous instance was selected again (the replacement keeps running);
 * `failed`: its backfill failed (lastError); terminal.
 */
export type RebuildState = 'backfilling' | 'comparing' | 'ready' | 'promoted' | 'rolled_back' | 'failed';

/** A rebuild in one of these states is still under way: a second rebuild of its processor is refused. */
export const ACTIVE_REBUILD_STATES: ReadonlySet<RebuildState> = new Set(['backfilling', 'comparing', 'ready']);

/** A replacement in these states is not queryable yet (409 `processor_rebuilding`). */
export const REBUILDING_STATES: ReadonlySet<RebuildState> = new Set(['backfilling', 'comparing']);

/** The outputs of the two instances compared over the blocks both cover as finalized. */
export interface RebuildComparison {
  readonly equal: boolean;
  /** The compared range (inclusive), or null when the instances share no finalized block. */
  readonly fromBlock: number | null;
  readonly toBlock: number | null;
  readonly blocksCompared: number;
  readonly changesCompared: number;
  /** The lowest block whose outputs differ, and how. */
  readonly firstDifference: { readonly blockNumber: number; readonly reason: string } | null;
  readonly comparedAt: string;
}

export interface RebuildRecord {
  readonly id: string;
  readonly processor: string;
  /** The instance serving when the rebuild was created (the one a rollback selects again). */
  readonly previousInstance: string;
  /** The new immutable instance (`<configured instance>~r<n>`), with its own tables. */
  readonly instance: string;
  readonly source: string;
  /** The replacement is rebuilt from this block (the processor's start_block) ... */
  readonly fromBlock: number;
  readonly idempotencyKey: string;
  readonly requestDigest: string;
  readonly state: RebuildState;
  readonly createdAt: string;
  readonly caughtUpAt: string | null;
  readonly promotedAt: string | null;
  readonly rolledBackAt: string | null;
  readonly comparison: RebuildComparison | null;
  readonly lastError: JobError | null;
  /** Consumers moved by the last promote or rollback: id → the sequence they resume after in the instance they moved to. */
  readonly movedConsumers: ReadonlyArray<{ readonly id: string; readonly to: string; readonly resumeAfter: string }>;
}

const recordKey = (id: string) => `rebuild:${id}`;
const idempotencyKey = (key: string) => `rebuild-key:${key}`;
const instanceKey = (instance: string) => `rebuild-instance:${instance}`;
export const servingKey = (processor: string) => `serving:${processor}`;

export function readRebuild(store: Store, id: string): RebuildRecord | undefined {
  return store.jobs.get(recordKey(id)) as RebuildRecord | undefined;
}

export function rebuildIdForKey(store: Store, key: string): string | undefined {
  return store.jobs.get(idempotencyKey(key)) as string | undefined;
}

/** The rebuild whose replacement is `instance`, if any. */
export function rebuildOfInstance(store: Store, instance: string): RebuildRecord | undefined {
  const id = store.jobs.get(instanceKey(instance)) as string | undefined;
  return id === undefined ? undefined : readRebuild(store, id);
}

/** Every rebuild, oldest first (ids sort by processor, then by their number). */
export function listRebuilds(store: Store): RebuildRecord[] {
  const records: RebuildRecord[] = [];
  for (const { value } of store.jobs.getRange({ start: 'rebuild:', end: 'rebuild;' })) records.push(value as RebuildRecord);
  return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

/** The instance serving `processor` when a promote or rollback has chosen one; undefined: the configured instance. */
export function servingInstance(store: Store, processor: string): string | undefined {
  return store.jobs.get(servingKey(processor)) as string | undefined;
}

/** Writes a new rebuild with its idempotency key and instance index. */
export function createRebuild(store: Store, record: RebuildRecord): Promise<void> {
  return store.write(() => {
    store.jobs.put(recordKey(record.id), record);
    store.jobs.put(idempotencyKey(record.idempotencyKey), record.id);
    store.jobs.put(instanceKey(record.instance), record.id);
  });
}

/** Reads the rebuild and writes `change(record)` in one write transaction. */
export function updateRebuild(store: Store, id: string, change: (record: RebuildRecord) => RebuildRecord): Promise<RebuildRecord | undefined> {
  return store.write(() => {
    const record = readRebuild(store, id);
    if (!record) return undefined;
    const next = change(record);
    if (next !== record) store.jobs.put(recordKey(id), next);
    return next;
  });
}
