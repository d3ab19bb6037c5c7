/**
 * Materialization-job records in the `jobs` table, written by the history lane only (actors/history). Keys:
 * `job:<id>` → the job record; `job-key:<idempotencyKey>` → the id of the job created with that key. A job record is
 * small and fixed in size whatever its range: progress is counts, never block lists.
 */
import type { Store } from './store.js';

export type JobState = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL_JOB_STATES: ReadonlySet<JobState> = new Set(['completed', 'failed', 'cancelled']);

export interface JobError {
  /** The block that failed, when one did. */
  readonly blockNumber: number | null;
  readonly message: string;
  readonly at: string;
}

/** What a materialization job and a backfill subscription (store/backfill-subscriptions.ts) record alike: a request over a block range, run in chunks. */
export interface HistoryWork {
  readonly id: string;
  readonly processor: string;
  readonly instance: string;
  /** The history source each range is asked of first; the others follow in configured order unless `sourceOnly`. */
  readonly source: string;
  /** The request named its source: only that one is asked (absent: false). */
  readonly sourceOnly?: boolean;
  readonly fromBlock: number;
  readonly toBlock: number;
  readonly idempotencyKey: string;
  /** The canonical request body the idempotency key was first used with. */
  readonly requestDigest: string;
  readonly state: JobState;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  /** The blocks of the range that are the work (a job: missing when created; a subscription: the blocks it owns). */
  readonly blocksTotal: number;
  /** The chunk being processed, or the last one. */
  readonly currentChunk: { readonly fromBlock: number; readonly toBlock: number } | null;
  readonly lastError: JobError | null;
  /** Set when a cancel was asked while the work ran; it stops after its chunk in flight. */
  readonly cancelRequested: boolean;
}

/**
 * The chunk a job or subscription shows in its progress: the one running work is on, or the one failed work failed
 * in; none for queued, completed or cancelled work (its last chunk is history, not progress).
 */
export function chunkInFlight(work: Pick<HistoryWork, 'state' | 'currentChunk'>): HistoryWork['currentChunk'] {
  return work.state === 'running' || work.state === 'failed' ? work.currentChunk : null;
}

/** The fields every admin view of a job or subscription shows as stored. */
export type HistoryWorkView = Pick<HistoryWork, 'id' | 'processor' | 'source' | 'fromBlock' | 'toBlock' | 'idempotencyKey' | 'state' | 'cancelRequested' | 'createdAt' | 'startedAt' | 'finishedAt' | 'lastError'>;

export interface MaterializationJob extends HistoryWork {
  readonly mode: 'fill_missing';
  /** Of the missing blocks, those committed by this job's chunks (or found covered since). */
  readonly blocksDone: number;
  /** The lowest block this job committed, with its verified hash: the trusted link for the chunk below it. */
  readonly anchor?: { readonly number: number; readonly hash: `0x${string}` } | null;
  /** Absent: an operator's materialization job; `cold_backfill`: the node's own job filling a processor's history below its live lane. */
  readonly purpose?: 'cold_backfill';
}

const jobKey = (id: string) => `job:${id}`;
const idempotencyKey = (key: string) => `job-key:${key}`;

export function readJob(store: Store, id: string): MaterializationJob | undefined {
  return store.jobs.get(jobKey(id)) as MaterializationJob | undefined;
}

export function jobIdForKey(store: Store, key: string): string | undefined {
  return store.jobs.get(idempotencyKey(key)) as string | undefined;
}

/** Every job, oldest first by creation (ids sort by creation time). */
export function listJobs(store: Store): MaterializationJob[] {
  const jobs: MaterializationJob[] = [];
  for (const { value } of store.jobs.getRange({ start: 'job:', end: 'job;' })) jobs.push(value as MaterializationJob);
  return jobs;
}

/** Writes a new job and its idempotency key together. */
export function createJob(store: Store, job: MaterializationJob): Promise<void> {
  return store.write(() => {
    store.jobs.put(jobKey(job.id), job);
    store.jobs.put(idempotencyKey(job.idempotencyKey), job.id);
  });
}

export function putJob(store: Store, job: MaterializationJob): Promise<void> {
  return store.write(() => {
    store.jobs.put(jobKey(job.id), job);
  });
}

/** Deletes a job and frees its idempotency key (the retry boundary of a terminal job). */
export function deleteJob(store: Store, job: MaterializationJob): Promise<void> {
  return store.write(() => removeJobRecord(store, job));
}

/** Writes the job's record, inside the caller's write transaction. */
export function putJobRecord(store: Store, job: MaterializationJob): void {
  store.jobs.put(jobKey(job.id), job);
}

/** Removes the job's record and its idempotency key, inside the caller's write transaction. */
export function removeJobRecord(store: Store, job: MaterializationJob): void {
  store.jobs.remove(jobKey(job.id));
  if (jobIdForKey(store, job.idempotencyKey) === job.id) store.jobs.remove(idempotencyKey(job.idempotencyKey));
}

/** Reads the job and writes `change(job)` in one write transaction (writers racing on one record never lose a field). */
export function updateJob(store: Store, id: string, change: (job: MaterializationJob) => MaterializationJob): Promise<MaterializationJob | undefined> {
  return store.write(() => {
    const job = readJob(store, id);
    if (!job) return undefined;
    const next = change(job);
    store.jobs.put(jobKey(id), next);
    return next;
  });
}
