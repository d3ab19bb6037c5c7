/**
 * Lane `history`: materialization jobs (spec §3.3, §4.6) and history-source probes. The one writer of job records
 * (store/history-jobs.ts). Jobs run one at a time, oldest first, in the background: each chunk of at most
 * `chunkBlocks` missing finalized blocks, from the top of the range down, is fetched from the job's history source,
 * verified block by block and as a hash chain whose top is the proven canonical hash at its height (the recorded
 * chain, or below it the proven run that anchor.ts walks down from the recorded chain's lowest block) and linked to
 * the proven block below when known, recorded in the chain tables, and handed to the
 * processor lane (`history.apply`), which commits it with its coverage in one transaction. Progress is re-derived
 * from coverage after every chunk, so a restart (even kill -9) resumes exactly where committed chunks end.
 *
 * Accepts HistoryInbox (messages.ts; replies HistoryReplies). Asks, from the listeners' admin routes:
 *   `job.create` {processor, fromBlock, toBlock, mode, idempotencyKey, source?} → {created, job}
 *   `job.list` → {data: job[]};  `job.get` {id} → job;  `job.cancel` {id} → job;  `job.delete` {id} → {deleted}
 *   `probe` {source} → ProbeResult
 *   `subscription.create` {processor, fromBlock, toBlock, mode, idempotencyKey, source?, consumer, credential} → {created, subscription}
 *   `subscription.list` → {data};  `subscription.get` {id};  `subscription.cancel` {id};  `subscription.delete` {id} → {deleted}
 *   (backfill subscriptions, subscriptions.ts; they run after the jobs, one at a time)
 *   `rebuild.create` {processor, idempotencyKey, source?} → {created, rebuild};  `rebuild.list` {processor} → {data};
 *   `rebuild.get` / `rebuild.rollback` {processor, id} → rebuild;  `rebuild.promote` {processor, id, acceptDifferences?} → rebuild
 *   `rebuild.cancel` {processor, id} → rebuild;  `rebuild.delete` {processor, id} → what it freed
 *   (processor rebuilds, rebuilds.ts: a replacement instance cold-backfilled beside the serving one)
 * Accepts (sent, from the rpc lane): `rpc.fill`, `rpc.locate` (on-demand JSON-RPC history, on-demand.ts), answered
 *   later by a `history.filled` message to the sender.
 * Accepts (sent, from a processor): `backfill.wake`. Sends a processor `backfill.failed` (its cold backfill failed).
 * Asks `node`: `rebuild.lane` (starts a replacement's lane), `rebuild.stop` (stops and removes it); `outbox`: `consumers.move` (promote, rollback).
 * Asks `processor.<id>`: `history.apply` {job, blocks: [{number, hash}]} → {applied, skipped};
 *   `history.publish` {subscription, stream, originKind, blocks} → {published, filled, streamHead, publishedThrough}.
 */
import { randomBytes } from 'node:crypto';
import { defineActor, unknownTag, type ActorContext } from '../../runtime/actor.js';
import { CodedError } from '../../runtime/errors.js';
import { errorFields } from '../../runtime/log.js';
import { readProgress, readRanges, type BlockRange } from '../../store/coverage.js';
import { openStore, type Store } from '../../store/store.js';
import {
  createJob, deleteJob, jobIdForKey, listJobs, readJob, updateJob, TERMINAL_JOB_STATES, chunkInFlight, type HistoryWorkView, type MaterializationJob,
} from '../../store/history-jobs.js';
import { HistoryBlockError } from '../../net/history/history-block.js';
import { UpstreamError } from '../../net/rpc/errors.js';
import type { Hash } from '../../net/eth/hex.js';
import type { RpcBatchInput, RpcBatchOutcome } from '../../net/history/rpc-batch.js';
import { createHistorySource, type AskPeers, type HistorySource, type HistorySourceArgs } from './sources.js';
import type { P2pSourceInbox, SourceReplies } from '../sources/messages.js';
import { chosenSource, missingSourceError, type SkippedHistorySource } from './source-choice.js';
import { checkOrderRange, sourceOrder, type SourceFailure } from './source-order.js';
import { missingCount, nextMissing, previousMissing } from './job-ranges.js';
import { fetchProvenChunk, historyRecorded } from './anchor.js';
import { DeferredTxIndex } from './tx-index-batch.js';
import { ensureColdBackfillJobs, reducedHashAt } from './cold-backfill.js';
import type { HistoryApplyMessage, ProcessorInbox } from '../processor/messages.js';
import type { CreateJobRequest, HistoryInbox } from './messages.js';
import {
  cancelBackfillSubscription, createBackfillSubscription, deleteBackfillSubscription, existingSubscription, nextSubscription, runSubscription, subscriptionView,
} from './subscriptions.js';
import { dropOrphanStreams, listSubscriptions } from '../../store/backfill-subscriptions.js';
import {
  advanceRebuilds, cancelProcessorRebuild, createProcessorRebuild, deleteProcessorRebuild, existingRebuild, listProcessorRebuilds, promoteRebuild, registerReplacements, rebuildView, rollbackRebuild,
} from './rebuilds.js';
import { startOnDemand, type OnDemandArgs } from './on-demand.js';
import type { BlockRef } from '../../store/chain-types.js';

export interface HistoryProcessorArgs {
  readonly id: string;
  readonly instance: string;
  readonly historyMode: 'live_only' | 'on_demand';
  readonly historyControl: 'node_owned' | 'application_subscriptions';
  readonly ordering: 'block_local' | 'ordered_state';
  readonly startBlock: number | null;
}

export interface HistoryArgs {
  readonly dataDir: string;
  readonly chainId: number;
  readonly chunkBlocks: number;
  readonly sources: readonly HistorySourceArgs[];
  /** `[[sources.history]]` entries the node does not use (actors/node/history-sources.ts): requests naming one get the reason. */
  readonly skippedSources: readonly SkippedHistorySource[];
  readonly processors: readonly HistoryProcessorArgs[];
  /** On-demand JSON-RPC history (on-demand.ts); absent: off. */
  readonly onDemand?: OnDemandArgs;
}

interface RunMeter {
  readonly job: string;
  readonly startedMs: number;
  readonly doneAtStart: number;
}

interface State {
  readonly store: Store;
  readonly sources: ReadonlyMap<string, HistorySource>;
  /** The configured processors by id, and rebuilds' replacement instances by instance (rebuilds.ts). */
  readonly processors: Map<string, HistoryProcessorArgs>;
  readonly shutdown: AbortController;
  running: Promise<void> | null;
  meter: RunMeter | null;
  stopping: boolean;
  /** The transaction index of the chunks jobs record, written in sorted batches (tx-index-batch.ts). */
  readonly txIndex: DeferredTxIndex;
  /** Whether what an earlier run left pending in it was indexed (at the runner's first start). */
  txIndexRecovered: boolean;
  /** Rescans processors for pending cold backfills (cold-backfill.ts). */
  coldScan?: NodeJS.Timeout;
  /** For the backfill subscriptions (subscriptions.ts). */
  readonly chainId: number;
  readonly chunkBlocks: number;
  readonly defaultSource: string | undefined;
  readonly skippedSources: readonly SkippedHistorySource[];
}

type Ctx = ActorContext<HistoryArgs>;

export interface JobView extends HistoryWorkView {
  readonly mode: 'fill_missing';
  readonly progress: {
    readonly blocksDone: number;
    readonly blocksTotal: number;
    readonly blocksPerSecond: number | null;
    readonly etaSeconds: number | null;
    readonly currentChunk: { readonly fromBlock: number; readonly toBlock: number } | null;
  };
  /** Present on the node's own cold-backfill jobs. */
  readonly purpose?: 'cold_backfill';
}

const APPLY_TIMEOUT_MS = 120_000;

export default defineActor<State, HistoryArgs, HistoryInbox>({
  async init(ctx) {
    const store = openStore({ dataDir: ctx.args.dataDir });
    // Streams of subscriptions deleted before their tables were dropped (older stores) free their table slots.
    const orphans = await dropOrphanStreams(store);
    if (orphans.length > 0) ctx.log.info('dropped the tables of backfill-subscription streams no subscription names', { streams: orphans.length });
    const shutdown = new AbortController();
    // An rpc source's batches are parsed, converted and verified on the CPU pool: this lane keeps HTTP and LMDB.
    // The answer's bytes are transferred to the pool, not copied (the history source no longer reads them).
    const convertBatch = (input: RpcBatchInput) => ctx.runTask<RpcBatchOutcome>('convertRpcBatch', input, [input.bytes]);
    const log = (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => ctx.log[level](message, fields);
    // A p2p source asks the live lane (actors/peers), which holds the peers.
    const askPeers: AskPeers = <M extends Parameters<AskPeers>[0]>(message: M, timeoutMs: number) => ctx.ask<P2pSourceInbox, SourceReplies[M['type']]>('source', message, timeoutMs);
    const sources = new Map(ctx.args.sources.map((source) => [source.id, createHistorySource(source, store, { signal: shutdown.signal, chainId: ctx.args.chainId, convertBatch, askPeers, log: (level, message, fields) => log(level, message, { source: source.id, ...fields }) })]));
    const state: State = {
      store, sources, processors: new Map(ctx.args.processors.map((p) => [p.id, p])), shutdown, running: null, meter: null, stopping: false,
      txIndex: new DeferredTxIndex(store), txIndexRecovered: false,
      chainId: ctx.args.chainId, chunkBlocks: ctx.args.chunkBlocks, defaultSource: ctx.args.sources[0]?.id, skippedSources: ctx.args.skippedSources,
    };
    registerReplacements(state);
    ctx.ready();
    setImmediate(() => pump(ctx, state));
    // Cold backfills: a processor records its plan at its first start and wakes this lane (`backfill.wake`); the
    // scan at start and every few seconds picks up one whose wake arrived before this lane ran.
    const scan = () => void scanColdBackfills(ctx, state);
    setImmediate(scan);
    state.coldScan = setInterval(scan, COLD_SCAN_MS);
    state.coldScan.unref();
    return state;
  },

  async handle(message, state, ctx, from) {
    switch (message.type) {
      case 'job.create': return createMaterializationJob(ctx, state, message);
      case 'job.list': return { data: listJobs(state.store).map((job) => view(state, job)) };
      case 'job.get': return view(state, existingJob(state, message.id));
      case 'job.cancel': return cancelJob(ctx, state, message.id);
      case 'job.delete': return removeJob(state, message.id);
      case 'probe': return probe(ctx, state, message.source);
      case 'subscription.create': {
        const result = await createBackfillSubscription(state, message, (text, fields) => ctx.log.info(text, fields));
        if (result.created) setImmediate(() => pump(ctx, state));
        return result;
      }
      case 'subscription.list': return { data: listSubscriptions(state.store).map((record) => subscriptionView(state, record)) };
      case 'subscription.get': return subscriptionView(state, existingSubscription(state, message.id));
      case 'subscription.cancel': return cancelBackfillSubscription(state, message.id);
      case 'subscription.delete': return deleteBackfillSubscription(state, message.id);
      case 'rpc.fill':
      case 'rpc.locate': {
        const onDemand = ctx.args.onDemand ?? { source: null, maxBlocks: 0, timeoutMs: 60_000 };
        startOnDemand(ctx, { store: state.store, sources: state.sources, shutdown: state.shutdown.signal, chunkBlocks: ctx.args.chunkBlocks, args: onDemand, skipped: sourceSkipped(ctx, `rpc.${message.type}`) }, message, from);
        return undefined;
      }
      case 'backfill.wake': return scanColdBackfills(ctx, state);
      case 'rebuild.create': {
        const result = await createProcessorRebuild(ctx, state, message);
        if (result.created) setImmediate(() => void scanColdBackfills(ctx, state));
        return result;
      }
      case 'rebuild.list': return listProcessorRebuilds(state, message.processor);
      case 'rebuild.get': return rebuildView(state, existingRebuild(state.store, message.processor, message.id));
      case 'rebuild.promote': return promoteRebuild(ctx, state, message.processor, message.id, message.acceptDifferences === true);
      case 'rebuild.rollback': return rollbackRebuild(ctx, state, message.processor, message.id);
      case 'rebuild.cancel': return cancelProcessorRebuild(ctx, state, message.processor, message.id);
      case 'rebuild.delete': return deleteProcessorRebuild(ctx, state, message.processor, message.id);
      default: throw new CodedError('invalid_request', `the history lane does not accept '${unknownTag(message)}'`);
    }
  },

  abort(state) {
    state.shutdown.abort(new Error('history lane aborted'));
  },

  async stop(state, ctx) {
    state.stopping = true;
    clearInterval(state.coldScan);
    state.shutdown.abort(new Error('history lane stopping'));
    await state.running?.catch((error: unknown) => ctx.log.warn('job runner ended with an error while stopping', errorFields(error)));
    // Entries still buffered are written now; if the stop is cut short, they are listed as pending and indexed at the next start.
    await state.txIndex.flush().catch((error: unknown) => ctx.log.warn('could not write the buffered transaction index; it is rebuilt at the next start', errorFields(error)));
    await Promise.all([...state.sources.values()].map((source) => source.close?.()));
    await state.store.close();
  },
});

function existingJob(state: State, id: string): MaterializationJob {
  const job = readJob(state.store, id);
  if (!job) throw new CodedError('not_found', `no materialization job '${id.slice(0, 80)}'`, { job: id.slice(0, 80) });
  return job;
}

function requestDigest(request: CreateJobRequest, source: string): string {
  return JSON.stringify({ processor: request.processor, fromBlock: request.fromBlock, toBlock: request.toBlock, mode: request.mode, source });
}

async function createMaterializationJob(ctx: Ctx, state: State, request: CreateJobRequest): Promise<{ created: boolean; job: JobView }> {
  const processor = state.processors.get(request.processor);
  if (!processor) throw new CodedError('not_found', `no processor '${request.processor.slice(0, 80)}'`, { processor: request.processor.slice(0, 80) });
  const source = chosenSource(state, request.source, 'a materialization job needs one');
  const sourceOnly = request.source !== undefined;
  checkOrderRange(sourceOrder(state.sources, source, sourceOnly), request.fromBlock, request.toBlock);
  const digest = requestDigest(request, source);
  const existingId = jobIdForKey(state.store, request.idempotencyKey);
  if (existingId !== undefined) {
    const existing = readJob(state.store, existingId);
    if (existing && existing.requestDigest === digest) return { created: false, job: view(state, existing) };
    throw new CodedError('conflict', `idempotency key '${request.idempotencyKey.slice(0, 80)}' was used with another request body (job ${existingId})`, { job: existingId });
  }
  if (processor.historyControl !== 'node_owned' || processor.historyMode !== 'on_demand') {
    throw new CodedError('unsupported_capability',
      `materialization jobs require history_control = "node_owned" and history_mode = "on_demand"; processor '${processor.id}' has history_control = "${processor.historyControl}" and history_mode = "${processor.historyMode}"`,
      { processor: processor.id, historyControl: processor.historyControl, historyMode: processor.historyMode });
  }
  if (processor.ordering !== 'block_local') {
    throw new CodedError('unsupported_capability', `processor '${processor.id}' has an ordered-state kind, which reduces in chain order; materialization jobs fill gaps of block-local kinds only (ordered-state history is a cold backfill)`, { processor: processor.id });
  }
  if (processor.startBlock !== null && request.fromBlock < processor.startBlock) {
    throw new CodedError('invalid_request', `fromBlock ${request.fromBlock} is below processor '${processor.id}' start_block ${processor.startBlock}`, { fromBlock: request.fromBlock, startBlock: processor.startBlock });
  }
  const tables = state.store.processor(processor.instance);
  const finalized = readProgress(tables.state).finalizedNumber;
  if (finalized === null || request.toBlock > finalized) {
    throw new CodedError('conflict', `toBlock ${request.toBlock} is above processor '${processor.id}' finalized block ${finalized ?? '(none yet)'}; a materialization job processes finalized blocks only`, { toBlock: request.toBlock, finalizedBlock: finalized });
  }
  const now = new Date();
  const job: MaterializationJob = {
    id: `mj-${now.getTime().toString(16).padStart(12, '0')}-${randomBytes(4).toString('hex')}`,
    processor: processor.id, instance: processor.instance, source, ...(sourceOnly ? { sourceOnly } : {}), fromBlock: request.fromBlock, toBlock: request.toBlock, mode: 'fill_missing',
    idempotencyKey: request.idempotencyKey, requestDigest: digest, state: 'queued', createdAt: now.toISOString(), startedAt: null, finishedAt: null,
    blocksTotal: missingCount(readRanges(tables.coverage), request.fromBlock, request.toBlock), blocksDone: 0, currentChunk: null, lastError: null, cancelRequested: false,
  };
  await createJob(state.store, job);
  ctx.log.info('materialization job created', { job: job.id, processor: job.processor, fromBlock: job.fromBlock, toBlock: job.toBlock, blocksTotal: job.blocksTotal });
  setImmediate(() => pump(ctx, state));
  return { created: true, job: view(state, job) };
}

async function cancelJob(ctx: Ctx, state: State, id: string): Promise<JobView> {
  const job = existingJob(state, id);
  if (TERMINAL_JOB_STATES.has(job.state)) return view(state, job);
  const next = (await updateJob(state.store, id, (current) => (current.state === 'queued'
    ? { ...current, state: 'cancelled', finishedAt: new Date().toISOString(), cancelRequested: true }
    : TERMINAL_JOB_STATES.has(current.state) ? current : { ...current, cancelRequested: true }))) ?? job;
  ctx.log.info('materialization job cancel requested', { job: id, state: next.state });
  return view(state, next);
}

async function removeJob(state: State, id: string): Promise<{ deleted: string }> {
  const job = existingJob(state, id);
  if (!TERMINAL_JOB_STATES.has(job.state)) throw new CodedError('conflict', `job '${id}' is ${job.state}; only a completed, failed or cancelled job can be deleted (cancel it first)`, { job: id, state: job.state });
  await deleteJob(state.store, job);
  return { deleted: id };
}

async function probe(ctx: Ctx, state: State, id: string): Promise<unknown> {
  const source = state.sources.get(id);
  if (!source) throw missingSourceError(id, state.skippedSources);
  try {
    return await source.probe(ctx.args.chainId);
  } catch (error) {
    if (error instanceof UpstreamError) throw new CodedError('source_unavailable', error.message, { source: id });
    throw error;
  }
}

function view(state: State, job: MaterializationJob): JobView {
  const meter = state.meter?.job === job.id && job.state === 'running' ? state.meter : null;
  let blocksPerSecond: number | null = null;
  let etaSeconds: number | null = null;
  if (meter) {
    const seconds = (performance.now() - meter.startedMs) / 1000;
    const done = job.blocksDone - meter.doneAtStart;
    if (seconds > 0 && done > 0) {
      blocksPerSecond = Math.round((done / seconds) * 100) / 100;
      etaSeconds = Math.round(((job.blocksTotal - job.blocksDone) / blocksPerSecond) * 10) / 10;
    }
  }
  return {
    id: job.id, processor: job.processor, source: job.source, fromBlock: job.fromBlock, toBlock: job.toBlock, mode: job.mode, idempotencyKey: job.idempotencyKey,
    state: job.state, cancelRequested: job.cancelRequested, createdAt: job.createdAt, startedAt: job.startedAt, finishedAt: job.finishedAt,
    progress: { blocksDone: job.blocksDone, blocksTotal: job.blocksTotal, blocksPerSecond, etaSeconds, currentChunk: chunkInFlight(job) },
    lastError: job.lastError,
    ...(job.purpose ? { purpose: job.purpose } : {}),
  };
}

const COLD_SCAN_MS = 2000;

/** A failed cold backfill degrades its processor's state (best effort: the scan tells it again after a restart). */
function tellBackfillFailed(ctx: Ctx, processor: string, job: string, blockNumber: number | null, message: string): void {
  ctx.send<ProcessorInbox>(`processor.${processor}`, { type: 'backfill.failed', job, blockNumber, message }).catch(() => undefined);
}

async function scanColdBackfills(ctx: Ctx, state: State): Promise<void> {
  if (state.stopping) return;
  try {
    const created = await ensureColdBackfillJobs(state.store, [...state.processors.values()], [...state.sources.keys()], (level, message, fields) => ctx.log[level](message, fields),
      (job) => tellBackfillFailed(ctx, job.processor, job.id, job.lastError?.blockNumber ?? null, job.lastError?.message ?? 'failed'));
    if (created > 0) pump(ctx, state);
    await advanceRebuilds(ctx, state);
  } catch (error) {
    if (!state.stopping) ctx.log.warn('cold backfill scan failed', errorFields(error));
  }
}

/** Starts the runner when it is idle and a job waits. */
function pump(ctx: Ctx, state: State): void {
  if (state.running || state.stopping) return;
  state.running = runJobs(ctx, state).catch((error: unknown) => {
    if (state.stopping) return;
    setImmediate(() => { throw error; });
  }).finally(() => { state.running = null; });
}

async function runJobs(ctx: Ctx, state: State): Promise<void> {
  if (!state.txIndexRecovered) {
    state.txIndexRecovered = true;
    const recovered = await state.txIndex.recover();
    if (recovered.blocks > 0) ctx.log.info('indexed the transactions of blocks an earlier run recorded without them', { blocks: recovered.blocks });
    if (recovered.missing.length > 0) ctx.log.warn('blocks listed for the transaction index have no stored link or body; their transactions stay unindexed', { blocks: recovered.missing.length, first: recovered.missing[0] });
  }
  for (;;) {
    if (state.stopping) return;
    const jobs = listJobs(state.store);
    const next = jobs.find((job) => job.state === 'running') ?? jobs.find((job) => job.state === 'queued');
    if (next) {
      await runJob(ctx, state, next);
      continue;
    }
    // Backfill subscriptions after the jobs, one at a time, oldest first (subscriptions.ts).
    const subscription = nextSubscription(state.store);
    if (!subscription) {
      // Idle: the entries of failed or cancelled work are written too.
      await state.txIndex.flush();
      return;
    }
    await runSubscription(ctx, state, subscription);
  }
}

async function finish(state: State, id: string, change: Partial<MaterializationJob>): Promise<void> {
  await updateJob(state.store, id, (job) => ({ ...job, ...change, finishedAt: new Date().toISOString() }));
}

async function runJob(ctx: Ctx, state: State, initial: MaterializationJob): Promise<void> {
  const id = initial.id;
  const processor = state.processors.get(initial.processor);
  // Each range from the job's source first, then the others in configured order, unless the request named it (source-order.ts).
  const order = sourceOrder(state.sources, initial.source, initial.sourceOnly === true);
  if (initial.cancelRequested) {
    // Cancelled with its processor (a rebuild's replacement, rebuilds.ts), which is no longer in `processors`.
    await finish(state, id, { state: 'cancelled' });
    return;
  }
  if (!processor || order.length === 0) {
    await finish(state, id, { state: 'failed', lastError: { blockNumber: null, message: `the processor '${initial.processor}' or every history source is no longer configured`, at: new Date().toISOString() } });
    return;
  }
  const tables = state.store.processor(initial.instance);
  const progressOf = () => initial.blocksTotal - Math.min(initial.blocksTotal, missingCount(readRanges(tables.coverage), initial.fromBlock, initial.toBlock));
  const started = await updateJob(state.store, id, (job) => (TERMINAL_JOB_STATES.has(job.state) ? job : { ...job, state: 'running', startedAt: job.startedAt ?? new Date().toISOString(), blocksDone: progressOf() }));
  if (started?.state !== 'running') return;
  state.meter = { job: id, startedMs: performance.now(), doneAtStart: progressOf() };
  ctx.log.info('materialization job running', { job: id, processor: initial.processor, source: initial.source, fromBlock: initial.fromBlock, toBlock: initial.toBlock });
  // Chunks go from the top of the range down, each linked to the block above it: a trusted hash (the canonical
  // chain, or the lowest block this job committed, kept in the job record), as the live rpc source walks back.
  // Ordered-state instances (cold backfills) reduce in chain order: their chunks go bottom-up (cold-backfill.ts).
  const ascending = processor.ordering === 'ordered_state';
  let cursor = initial.toBlock;
  // Pipelined: while the processor lane applies one chunk, this lane fetches, verifies and records the next one
  // (the chunk the runner will ask for once this one is covered), so both run at once. At most one chunk waits
  // ahead; it is used only when the runner's next chunk is exactly that range, and an error in it fails the job
  // only when the runner reaches it, after the chunk below (or above) it was committed, as without the pipeline.
  let ahead: Prefetch | null = null;
  const fetchChunk = (chunk: BlockRange, below: () => Hash | null): Prefetch => {
    const blocks = (async () => (order.some((source) => source.recordsNeeded) ? historyRecorded(state.store, chunk.from, chunk.to) : null) ?? fetchProvenChunk(state.store, order, chunk, {
      belowFallback: below, signal: state.shutdown.signal, stopping: () => state.stopping, skipped: sourceSkipped(ctx, id), txIndex: state.txIndex,
    }))();
    blocks.catch(() => undefined);
    return { chunk, blocks };
  };
  try {
    for (;;) {
      if (state.stopping) return;
      const job = readJob(state.store, id);
      if (!job) return;
      if (job.cancelRequested) {
        await finish(state, id, { state: 'cancelled', blocksDone: progressOf() });
        ctx.log.info('materialization job cancelled', { job: id });
        return;
      }
      const chunk = ascending ? nextMissing(readRanges(tables.coverage), job.fromBlock, job.toBlock, ctx.args.chunkBlocks)
        : cursor < job.fromBlock ? null : previousMissing(readRanges(tables.coverage), job.fromBlock, cursor, ctx.args.chunkBlocks);
      if (chunk === null) {
        await state.txIndex.flush();
        await finish(state, id, { state: 'completed', blocksDone: progressOf(), currentChunk: null });
        ctx.log.info('materialization job completed', { job: id, blocks: job.blocksTotal });
        return;
      }
      await updateJob(state.store, id, (current) => ({ ...current, currentChunk: { fromBlock: chunk.from, toBlock: chunk.to } }));
      try {
        const fetched: Prefetch = ahead !== null && ahead.chunk.from === chunk.from && ahead.chunk.to === chunk.to ? ahead
          // Below the chunk, for chain-order (ordered-state) history without a trusted hash: the hash its reduce reached.
          : fetchChunk(chunk, ascending ? () => reducedHashAt(tables, chunk.from - 1) : () => null);
        if (ahead !== null && ahead !== fetched) await ahead.blocks.catch(() => undefined);
        ahead = null;
        // Blocks history recorded already (another job's chunks over the range) are not fetched again.
        const blocks = await fetched.blocks;
        if (state.stopping) return;
        // The next chunk, once this one is covered: fetched while this one is applied. Below it, for chain order,
        // the top of this chunk (which its reduce reaches when this apply commits).
        const ranges = readRanges(tables.coverage);
        const next = ascending ? (chunk.to < job.toBlock ? nextMissing(ranges, chunk.to + 1, job.toBlock, ctx.args.chunkBlocks) : null)
          : chunk.from - 1 < job.fromBlock ? null : previousMissing(ranges, job.fromBlock, chunk.from - 1, ctx.args.chunkBlocks);
        const top = blocks.at(-1)!;
        if (next !== null) ahead = fetchChunk(next, ascending ? () => (next.from - 1 === top.number ? top.hash : reducedHashAt(tables, next.from - 1)) : () => null);
        const message: HistoryApplyMessage = { type: 'history.apply', job: id, blocks };
        await ctx.ask<ProcessorInbox>(`processor.${initial.processor}`, message, APPLY_TIMEOUT_MS);
        const lowest = blocks[0]!;
        cursor = chunk.from - 1;
        await updateJob(state.store, id, (current) => ({ ...current, blocksDone: progressOf(), anchor: ascending ? current.anchor ?? null : { number: lowest.number, hash: lowest.hash } }));
      } catch (error) {
        if (state.stopping) return;
        if (readJob(state.store, id)?.cancelRequested) {
          // Cancelled while its chunk was in flight (a cancelled rebuild's lane stops under it): not a failure.
          await finish(state, id, { state: 'cancelled' });
          ctx.log.info('materialization job cancelled', { job: id, reason: (error as Error).message });
          return;
        }
        const blockNumber = error instanceof HistoryBlockError ? error.blockNumber : null;
        const message = error instanceof HistoryBlockError ? error.message : `chunk ${chunk.from}-${chunk.to}: ${(error as Error).message}`;
        await finish(state, id, { state: 'failed', blocksDone: progressOf(), lastError: { blockNumber, message, at: new Date().toISOString() } });
        ctx.log.warn('materialization job failed; its chunk was not committed', { job: id, chunkFrom: chunk.from, chunkTo: chunk.to, blockNumber, reason: message });
        if (initial.purpose === 'cold_backfill') tellBackfillFailed(ctx, initial.processor, id, blockNumber, message);
        return;
      }
    }
  } finally {
    // A chunk fetched ahead finishes (its record is verified material, harmless) before the lane may close the store.
    if (ahead !== null) await (ahead as Prefetch).blocks.catch(() => undefined);
  }
}

/** Logs a source that could not serve a range of `work` (the next one in order was asked). */
export function sourceSkipped(ctx: Pick<Ctx, 'log'>, work: string): (failure: SourceFailure) => void {
  return (failure) => ctx.log.info('history source could not serve a range; asking the next one', { work, source: failure.source, blockNumber: failure.blockNumber, reason: failure.reason.slice(0, 300) });
}

/** A chunk fetched (verified, proven and recorded) ahead of its apply. */
interface Prefetch {
  readonly chunk: BlockRange;
  readonly blocks: Promise<Array<BlockRef>>;
}
