/**
 * Processor rebuilds (spec §9.5) in the `jobs` table, written by the history lane (actors/history/rebuilds.ts) —
 * except `serving:<processor>`, which the outbox writes in the transaction that moves the processor's consumers
 * (actors/outbox/consumer-move.ts), so the serving instance and the consumers' instance never disagree. Keys:
 *   `rebuild:<id>`               → the rebuild record
 *   `rebuild-key:<key>`          → the id of the rebuild created with that idempotency key
 *   `rebuild-instance:<instance>`→ the id of the rebuild whose replacement that instance is
 *   `serving:<processor>`        → the instance that serves the processor's queries and consumers (absent: the configured one)
 *   `rebuild-retired:<instance>` → {id, deletedAt}: the replacement of a deleted rebuild; its name is never given again
 *                                  (cursors name their instance, spec §2.4)
 */
import type { Store } from './store.js';
import { putJobRecord, readJob, removeJobRecord, TERMINAL_JOB_STATES, type JobError } from './history-jobs.js';
import { dropInstanceTables } from './drop-instance.js';

/**
 * `backfilling`: the replacement instance is rebuilt (queries of it answer 409 `processor_rebuilding`);
 * `comparing`: it caught up and its outputs are compared with the serving instance's;
 * `ready`: compared, waiting for the operator to promote it; `promoted`: it serves the processor;
 * `rolled_back`: promoted, then the previous instance was selected again (the replacement keeps running);
 * `failed`: its backfill failed (lastError); `cancelled`: stopped by the operator (its lane is stopped and never
 * started again; its tables stay until the rebuild is deleted); terminal.
 */
export type RebuildState = 'backfilling' | 'comparing' | 'ready' | 'promoted' | 'rolled_back' | 'failed' | 'cancelled';

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
  /** Absent on records written before cancellation existed. */
  readonly cancelledAt?: string | null;
  readonly comparison: RebuildComparison | null;
  readonly lastError: JobError | null;
  /** Consumers moved by the last promote or rollback: id → the sequence they resume after in the instance they moved to. */
  readonly movedConsumers: ReadonlyArray<{ readonly id: string; readonly to: string; readonly resumeAfter: string }>;
}

const recordKey = (id: string) => `rebuild:${id}`;
const idempotencyKey = (key: string) => `rebuild-key:${key}`;
const instanceKey = (instance: string) => `rebuild-instance:${instance}`;
export const servingKey = (processor: string) => `serving:${processor}`;
const retiredKey = (instance: string) => `rebuild-retired:${instance}`;

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

/** Replacement instances of deleted rebuilds (their names are never given again). */
export function retiredInstances(store: Store): string[] {
  return [...store.jobs.getKeys({ start: 'rebuild-retired:', end: 'rebuild-retired;' })].map((key) => String(key).slice('rebuild-retired:'.length));
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

/**
 * Marks the rebuild cancelled and, in the same write transaction, its cold-backfill job `jobId`: a queued job is
 * cancelled at once, a running one is asked to stop after its chunk in flight. Returns the record as written.
 */
export function cancelRebuildRecord(store: Store, id: string, jobId: string): Promise<RebuildRecord | undefined> {
  return store.write(() => {
    const record = readRebuild(store, id);
    if (!record || record.state === 'cancelled') return record;
    const now = new Date().toISOString();
    const next: RebuildRecord = { ...record, state: 'cancelled', cancelledAt: now };
    store.jobs.put(recordKey(id), next);
    const job = readJob(store, jobId);
    if (job && !TERMINAL_JOB_STATES.has(job.state)) {
      putJobRecord(store, job.state === 'queued' ? { ...job, state: 'cancelled', finishedAt: now, cancelRequested: true } : { ...job, cancelRequested: true });
    }
    return next;
  });
}

/** What deleting a rebuild removed (the DELETE answer). */
export interface RebuildDeletion {
  readonly deleted: string;
  readonly instance: string;
  /** The replacement's tables dropped from the store (their LMDB slots are free again). */
  readonly tables: readonly string[];
  /** Entries those tables held (entities, changes, coverage, checkpoints, savepoints, artifacts, state, undo). */
  readonly entries: number;
  /** Consumer records of the replacement instance removed. */
  readonly consumers: readonly string[];
  /** Its cold-backfill job record, when there was one. */
  readonly jobs: readonly string[];
}

/**
 * Deletes a cancelled rebuild in one write transaction: its replacement's tables (dropped), the consumer records of
 * that instance, its cold-backfill job (`jobId`), the record, its idempotency key and instance index; the instance
 * name is kept retired. The serving instance and the previous instance are never touched.
 */
export async function deleteRebuild(store: Store, record: RebuildRecord, jobId: string): Promise<RebuildDeletion> {
  store.processor(record.instance);
  const deletion = await store.write((): RebuildDeletion => {
    const consumers: string[] = [];
    for (const key of [...store.consumers.getKeys({ start: `${record.instance}/`, end: `${record.instance}0` })]) {
      consumers.push(String(key).slice(record.instance.length + 1));
      store.consumers.remove(key);
    }
    const jobs: string[] = [];
    const job = readJob(store, jobId);
    if (job) {
      removeJobRecord(store, job);
      jobs.push(jobId);
    }
    store.jobs.remove(recordKey(record.id));
    if (rebuildIdForKey(store, record.idempotencyKey) === record.id) store.jobs.remove(idempotencyKey(record.idempotencyKey));
    store.jobs.remove(instanceKey(record.instance));
    store.jobs.put(retiredKey(record.instance), { id: record.id, deletedAt: new Date().toISOString() });
    const { tables, entries } = dropInstanceTables(store, record.instance);
    return { deleted: record.id, instance: record.instance, tables, entries, consumers, jobs };
  });
  store.forgetProcessor(record.instance);
  return deletion;
}
