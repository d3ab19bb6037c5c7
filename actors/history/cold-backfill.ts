/**
 * The history lane's side of cold backfills (actors/processor/cold-backfill.ts plans them): each instance whose
 * progress records a pending backfill gets one node-owned materialization job (`purpose: "cold_backfill"`, id
 * `cb-<instance>`, idempotency key `cold-backfill:<instance>`) over [fromBlock, targetBlock], run by the same runner
 * as operators' jobs, listed beside them with its progress. A terminal cold job is never retried implicitly:
 * deleting it (DELETE …/materialization-jobs/cb-<instance>) is the retry boundary, after which the next scan creates
 * it again while the backfill is still pending.
 *
 * Ordered-state instances take their history in chain order: chunks run bottom-up, each linked below to the block
 * their state reflects (the reduce cursor) and the top one to the canonical block above the target.
 */
import { readProgress, readRanges } from '../../store/coverage.js';
import type { ProcessorTables, Store } from '../../store/store.js';
import { createJob, jobIdForKey, readJob, type MaterializationJob } from '../../store/history-jobs.js';
import type { Hash } from '../../net/eth/hex.js';
import { missingCount } from './job-ranges.js';

export interface ColdBackfillProcessor {
  readonly id: string;
  readonly instance: string;
}

export const coldJobId = (instance: string): string => `cb-${instance}`;
const coldJobKey = (instance: string): string => `cold-backfill:${instance}`;

let serial: Promise<unknown> = Promise.resolve();
/** Instances already warned about (once per process) for a history source no longer configured. */
const warned = new Set<string>();

/**
 * Creates the missing job of every pending cold backfill (serialised: scans never race to create one twice), and
 * hands `failed` each pending backfill whose job has failed (its processor reports `degraded` until it is retried).
 */
export function ensureColdBackfillJobs(
  store: Store, processors: readonly ColdBackfillProcessor[], sources: readonly string[],
  log: (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void, failed: (job: MaterializationJob) => void,
): Promise<number> {
  const run = serial.then(async () => {
    let created = 0;
    for (const processor of processors) {
      const tables = store.processor(processor.instance);
      const backfill = readProgress(tables.state).coldBackfill;
      if (!backfill || backfill.completed) continue;
      const existing = jobIdForKey(store, coldJobKey(processor.instance));
      if (existing !== undefined) {
        const job = readJob(store, existing);
        if (job?.state === 'failed') failed(job);
        continue;
      }
      if (sources.length === 0) {
        if (warned.has(processor.instance)) continue;
        warned.add(processor.instance);
        log('warn', 'cold backfill waits: no history source is configured any more', { processor: processor.id, source: backfill.source });
        continue;
      }
      // The planned source first (the others follow per range, source-order.ts); the first configured one when it is gone.
      const source = sources.includes(backfill.source) ? backfill.source : sources[0]!;
      const now = new Date().toISOString();
      const request = { processor: processor.id, fromBlock: backfill.fromBlock, toBlock: backfill.targetBlock, mode: 'fill_missing', source, purpose: 'cold_backfill' };
      const job: MaterializationJob = {
        id: coldJobId(processor.instance), processor: processor.id, instance: processor.instance, source,
        fromBlock: backfill.fromBlock, toBlock: backfill.targetBlock, mode: 'fill_missing', idempotencyKey: coldJobKey(processor.instance), requestDigest: JSON.stringify(request),
        state: 'queued', createdAt: now, startedAt: null, finishedAt: null,
        blocksTotal: missingCount(readRanges(tables.coverage), backfill.fromBlock, backfill.targetBlock), blocksDone: 0, currentChunk: null, lastError: null, cancelRequested: false,
        purpose: 'cold_backfill',
      };
      await createJob(store, job);
      log('info', 'cold backfill job created', { job: job.id, processor: processor.id, fromBlock: job.fromBlock, toBlock: job.toBlock, blocksTotal: job.blocksTotal });
      created += 1;
    }
    return created;
  });
  serial = run.catch(() => undefined);
  return run;
}

/** The verified hash of block `number` an ordered-state instance's state reflects (its reduce cursor), when it is that block. */
export function reducedHashAt(tables: ProcessorTables, number: number): Hash | null {
  const cursor = readProgress(tables.state).reduceCursor;
  return cursor !== null && cursor.number === number ? cursor.hash : null;
}
