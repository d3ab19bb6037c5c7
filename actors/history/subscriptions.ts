/**
 * Backfill subscriptions (spec §3.3, §4.6) in the history lane: creation (the record, its owned runs, its consumer
 * and its stream, atomically — store/backfill-subscriptions.ts), list/get/cancel/delete, and the runner of one
 * subscription. Only for `history_control = "application_subscriptions"` + `history_mode = "on_demand"` processors of a
 * block-local kind; a `node_owned` processor is never scheduled through this route.
 *
 * Modes (what the subscription's consumer reads): `fill_missing` owns the gaps of its range existing at creation and
 * publishes each of those blocks into its stream, also when another subscription (or anything else) covered it first;
 * `recompute` publishes every block of its range. The runner goes up its owned runs in chunks of at most
 * `chunk_blocks` blocks: each chunk is fetched from the history source, verified (hash, roots, bloom, the hash chain,
 * canonical by proven links, as a materialization job's), recorded, then `history.publish` is asked of the processor
 * lane, which commits the instance's part and the stream's changes in one transaction (actors/processor/history-publish.ts).
 * The stream's progress record says which block was published last: a restart (even kill -9) resumes after it.
 */
import { randomBytes } from 'node:crypto';
import type { ActorContext } from '../../runtime/actor.js';
import { CodedError } from '../../runtime/errors.js';
import { readProgress, readRanges } from '../../store/coverage.js';
import type { ConsumerRecord } from '../../store/consumers.js';
import { hashCredential, verifyCredential } from '../../store/credential-hash.js';
import { encodeCursor } from '../../store/cursor.js';
import type { Store } from '../../store/store.js';
import {
  createSubscription, deleteSubscription, listSubscriptions, ownedCountThrough, ownedRunsAfter, readSubscription, streamInstance, streamProgress,
  subscriptionIdForKey, SubscriptionConflict, updateSubscription, type BackfillSubscription, type OwnedRun, type SubscriptionMode,
} from '../../store/backfill-subscriptions.js';
import { chunkInFlight, TERMINAL_JOB_STATES, type HistoryWorkView } from '../../store/history-jobs.js';
import { HistoryBlockError } from '../../net/history/history-block.js';
import { fetchProvenChunk } from './anchor.js';
import type { DeferredTxIndex } from './tx-index-batch.js';
import type { HistorySource } from './sources.js';
import { chosenSource, type SourceChoice } from './source-choice.js';
import { checkOrderRange, sourceOrder } from './source-order.js';
import type { HistoryProcessorArgs } from './actor.js';
import type { HistoryPublishMessage, ProcessorInbox, ProcessorReplies } from '../processor/messages.js';
import type { CreateSubscriptionRequest } from './messages.js';

const PUBLISH_TIMEOUT_MS = 120_000;

export interface SubscriptionLane extends SourceChoice {
  readonly store: Store;
  readonly sources: ReadonlyMap<string, HistorySource>;
  readonly processors: ReadonlyMap<string, HistoryProcessorArgs>;
  readonly shutdown: AbortController;
  readonly stopping: boolean;
  readonly chainId: number;
  readonly chunkBlocks: number;
  /** The lane's deferred transaction index (tx-index-batch.ts). */
  readonly txIndex: DeferredTxIndex;
}

export interface SubscriptionView extends HistoryWorkView {
  readonly mode: SubscriptionMode;
  readonly consumer: { readonly id: string; readonly path: string };
  readonly progress: {
    readonly blocksDone: number;
    readonly blocksTotal: number;
    readonly publishedThrough: number | null;
    readonly changesPublished: string;
    readonly currentChunk: { readonly fromBlock: number; readonly toBlock: number } | null;
  };
}

export function subscriptionView(lane: Pick<SubscriptionLane, 'store'>, record: BackfillSubscription): SubscriptionView {
  const stream = streamProgress(lane.store, record.stream);
  return {
    id: record.id, processor: record.processor, source: record.source, fromBlock: record.fromBlock, toBlock: record.toBlock, mode: record.mode,
    idempotencyKey: record.idempotencyKey,
    consumer: { id: record.consumer, path: `/v1/processors/${encodeURIComponent(record.processor)}/consumers/${encodeURIComponent(record.consumer)}` },
    state: record.state, cancelRequested: record.cancelRequested, createdAt: record.createdAt, startedAt: record.startedAt, finishedAt: record.finishedAt,
    progress: {
      blocksDone: ownedCountThrough(lane.store, record.id, stream.publishedThrough), blocksTotal: record.blocksTotal,
      publishedThrough: stream.publishedThrough, changesPublished: stream.head.toString(), currentChunk: chunkInFlight(record),
    },
    lastError: record.lastError,
  };
}

export function existingSubscription(lane: Pick<SubscriptionLane, 'store'>, id: string): BackfillSubscription {
  const record = readSubscription(lane.store, id);
  if (!record) throw new CodedError('not_found', `no backfill subscription '${id.slice(0, 80)}'`, { subscription: id.slice(0, 80) });
  return record;
}

function requestDigest(request: CreateSubscriptionRequest, source: string): string {
  return JSON.stringify({
    processor: request.processor, fromBlock: request.fromBlock, toBlock: request.toBlock, mode: request.mode, source,
    consumer: { id: request.consumer.id, role: request.consumer.role, leaseTtlSeconds: request.consumer.leaseTtlSeconds },
  });
}

/** The uncovered runs of [from, to] (a fill_missing subscription's owned runs). */
export function gaps(ranges: ReadonlyArray<{ from: number; to: number }>, from: number, to: number): OwnedRun[] {
  const runs: OwnedRun[] = [];
  let next = from;
  for (const r of ranges) {
    if (r.to < next) continue;
    if (r.from > to) break;
    if (r.from > next) runs.push({ from: next, to: Math.min(to, r.from - 1) });
    next = Math.max(next, r.to + 1);
    if (next > to) break;
  }
  if (next <= to) runs.push({ from: next, to });
  return runs;
}

export async function createBackfillSubscription(
  lane: SubscriptionLane, request: CreateSubscriptionRequest, log: (message: string, fields: Record<string, unknown>) => void,
): Promise<{ created: boolean; subscription: SubscriptionView }> {
  const processor = lane.processors.get(request.processor);
  if (!processor) throw new CodedError('not_found', `no processor '${request.processor.slice(0, 80)}'`, { processor: request.processor.slice(0, 80) });
  const source = chosenSource(lane, request.source, 'a backfill subscription needs one');
  const sourceOnly = request.source !== undefined;
  checkOrderRange(sourceOrder(lane.sources, source, sourceOnly), request.fromBlock, request.toBlock);
  const digest = requestDigest(request, source);
  const existingId = subscriptionIdForKey(lane.store, request.idempotencyKey);
  if (existingId !== undefined) {
    const existing = readSubscription(lane.store, existingId);
    const consumer = existing ? lane.store.consumers.get(`${existing.stream}/${existing.consumer}`) as ConsumerRecord | undefined : undefined;
    if (existing && existing.requestDigest === digest && consumer && await verifyCredential(request.credential, consumer.credential)) {
      return { created: false, subscription: subscriptionView(lane, existing) };
    }
    throw new CodedError('conflict', `idempotency key '${request.idempotencyKey.slice(0, 80)}' was used with another request body or consumer credential (subscription ${existingId})`, { subscription: existingId });
  }
  if (processor.historyControl !== 'application_subscriptions' || processor.historyMode !== 'on_demand') {
    throw new CodedError('unsupported_capability',
      `backfill subscriptions require history_control = "application_subscriptions" and history_mode = "on_demand"; processor '${processor.id}' has history_control = "${processor.historyControl}" and history_mode = "${processor.historyMode}"${processor.historyControl === 'node_owned' ? ' (a node_owned processor is scheduled by the node and its operator only: use a materialization job)' : ''}`,
      { processor: processor.id, historyControl: processor.historyControl, historyMode: processor.historyMode });
  }
  if (processor.ordering !== 'block_local') {
    throw new CodedError('unsupported_capability', `processor '${processor.id}' has an ordered-state kind: its changes at a block depend on the state reduced before it, so a backfill subscription cannot republish them (only block-local kinds can be backfilled or recomputed per block)`, { processor: processor.id });
  }
  if (processor.startBlock !== null && request.fromBlock < processor.startBlock) {
    throw new CodedError('invalid_request', `fromBlock ${request.fromBlock} is below processor '${processor.id}' start_block ${processor.startBlock}`, { fromBlock: request.fromBlock, startBlock: processor.startBlock });
  }
  const tables = lane.store.processor(processor.instance);
  const finalized = readProgress(tables.state).finalizedNumber;
  if (finalized === null || request.toBlock > finalized) {
    throw new CodedError('conflict', `toBlock ${request.toBlock} is above processor '${processor.id}' finalized block ${finalized ?? '(none yet)'}; a backfill subscription publishes finalized blocks only`, { toBlock: request.toBlock, finalizedBlock: finalized });
  }
  const now = new Date();
  const id = `bs-${now.getTime().toString(16).padStart(12, '0')}-${randomBytes(4).toString('hex')}`;
  const stream = streamInstance(id);
  const runs = request.mode === 'recompute' ? [{ from: request.fromBlock, to: request.toBlock }] : gaps(readRanges(tables.coverage), request.fromBlock, request.toBlock);
  const record: BackfillSubscription = {
    id, processor: processor.id, instance: processor.instance, stream, consumer: request.consumer.id, source, ...(sourceOnly ? { sourceOnly } : {}),
    fromBlock: request.fromBlock, toBlock: request.toBlock, mode: request.mode, idempotencyKey: request.idempotencyKey, requestDigest: digest,
    state: 'queued', createdAt: now.toISOString(), startedAt: null, finishedAt: null,
    blocksTotal: runs.reduce((sum, run) => sum + run.to - run.from + 1, 0), currentChunk: null, lastError: null, cancelRequested: false,
  };
  const origin = encodeCursor({ epoch: lane.store.epoch, chainId: lane.chainId, instance: stream, sequence: 0n });
  const consumer: ConsumerRecord = {
    version: 1, processor: processor.id, instance: stream, id: request.consumer.id, role: request.consumer.role,
    leaseTtlSeconds: request.consumer.leaseTtlSeconds, leaseExpiresAt: now.getTime() + request.consumer.leaseTtlSeconds * 1000, createdAt: now.toISOString(),
    credential: await hashCredential(request.credential), start: { position: 'earliest_retained', sequence: 0n },
    delivered: 0n, deliveredCursor: origin, acknowledged: 0n, acknowledgedCursor: origin,
  };
  try {
    await createSubscription(lane.store, record, runs, consumer);
  } catch (error) {
    if (error instanceof SubscriptionConflict) throw new CodedError('conflict', `${error.message}; choose another consumer id`, { consumer: request.consumer.id });
    throw error;
  }
  log('backfill subscription created', { subscription: id, processor: processor.id, mode: record.mode, fromBlock: record.fromBlock, toBlock: record.toBlock, blocksTotal: record.blocksTotal, consumer: record.consumer });
  return { created: true, subscription: subscriptionView(lane, record) };
}

export async function cancelBackfillSubscription(lane: SubscriptionLane, id: string): Promise<SubscriptionView> {
  const record = existingSubscription(lane, id);
  if (TERMINAL_JOB_STATES.has(record.state)) return subscriptionView(lane, record);
  const next = (await updateSubscription(lane.store, id, (current) => (current.state === 'queued'
    ? { ...current, state: 'cancelled', finishedAt: new Date().toISOString(), cancelRequested: true }
    : TERMINAL_JOB_STATES.has(current.state) ? current : { ...current, cancelRequested: true }))) ?? record;
  return subscriptionView(lane, next);
}

export async function deleteBackfillSubscription(lane: SubscriptionLane, id: string): Promise<{ deleted: string }> {
  const record = existingSubscription(lane, id);
  if (!TERMINAL_JOB_STATES.has(record.state)) {
    throw new CodedError('conflict', `backfill subscription '${id}' is ${record.state}; only a completed, failed or cancelled subscription can be deleted (cancel it first)`, { subscription: id, state: record.state });
  }
  await deleteSubscription(lane.store, record);
  return { deleted: id };
}

/** The next subscription to run: one left running (a restart), else the oldest queued. */
export function nextSubscription(store: Store): BackfillSubscription | undefined {
  const records = listSubscriptions(store);
  return records.find((r) => r.state === 'running') ?? records.find((r) => r.state === 'queued');
}

async function finish(store: Store, id: string, change: Partial<BackfillSubscription>): Promise<void> {
  await updateSubscription(store, id, (record) => ({ ...record, ...change, finishedAt: new Date().toISOString() }));
}

export async function runSubscription(ctx: ActorContext<unknown>, lane: SubscriptionLane, initial: BackfillSubscription): Promise<void> {
  const { store } = lane;
  const id = initial.id;
  const processor = lane.processors.get(initial.processor);
  // Each range from the subscription's source first, then the others in configured order, unless the request named it (source-order.ts).
  const order = sourceOrder(lane.sources, initial.source, initial.sourceOnly === true);
  if (!processor || order.length === 0) {
    await finish(store, id, { state: 'failed', lastError: { blockNumber: null, message: `the processor '${initial.processor}' or every history source is no longer configured`, at: new Date().toISOString() } });
    return;
  }
  const started = await updateSubscription(store, id, (r) => (TERMINAL_JOB_STATES.has(r.state) ? r : { ...r, state: 'running', startedAt: r.startedAt ?? new Date().toISOString() }));
  if (started?.state !== 'running') return;
  ctx.log.info('backfill subscription running', { subscription: id, processor: initial.processor, mode: initial.mode, fromBlock: initial.fromBlock, toBlock: initial.toBlock });
  store.env.resetReadTxn();
  let publishedThrough = streamProgress(store, initial.stream).publishedThrough ?? initial.fromBlock - 1;
  const originKind = initial.mode === 'recompute' ? 'recompute' : 'historical_backfill';
  for (;;) {
    if (lane.stopping) return;
    const record = readSubscription(store, id);
    if (!record) return;
    // Every owned block published: completed, even when a cancel arrived while its last chunk was in flight.
    const run = ownedRunsAfter(store, id, publishedThrough, 1)[0];
    if (run === undefined) {
      await lane.txIndex.flush();
      await finish(store, id, { state: 'completed' });
      ctx.log.info('backfill subscription completed', { subscription: id, blocks: record.blocksTotal });
      return;
    }
    if (record.cancelRequested) {
      await finish(store, id, { state: 'cancelled' });
      ctx.log.info('backfill subscription cancelled', { subscription: id, publishedThrough });
      return;
    }
    const chunk = { from: run.from, to: Math.min(run.to, run.from + lane.chunkBlocks - 1) };
    await updateSubscription(store, id, (current) => ({ ...current, currentChunk: { fromBlock: chunk.from, toBlock: chunk.to } }));
    try {
      const blocks = await fetchProvenChunk(store, order, chunk, {
        belowFallback: () => null, signal: lane.shutdown.signal, stopping: () => lane.stopping, txIndex: lane.txIndex,
        skipped: (failure) => ctx.log.info('history source could not serve a range; asking the next one', { work: id, source: failure.source, blockNumber: failure.blockNumber, reason: failure.reason.slice(0, 300) }),
      });
      if (lane.stopping) return;
      const message: HistoryPublishMessage = { type: 'history.publish', subscription: id, stream: initial.stream, originKind, blocks };
      const result = await ctx.ask<ProcessorInbox, ProcessorReplies['history.publish']>(`processor.${initial.processor}`, message, PUBLISH_TIMEOUT_MS);
      publishedThrough = Math.max(publishedThrough, result.publishedThrough ?? chunk.to);
    } catch (error) {
      if (lane.stopping) return;
      const blockNumber = error instanceof HistoryBlockError ? error.blockNumber : null;
      const message = error instanceof HistoryBlockError ? error.message : `chunk ${chunk.from}-${chunk.to}: ${(error as Error).message}`;
      await finish(store, id, { state: 'failed', lastError: { blockNumber, message, at: new Date().toISOString() } });
      ctx.log.warn('backfill subscription failed; its chunk was not published', { subscription: id, chunkFrom: chunk.from, chunkTo: chunk.to, blockNumber, reason: message });
      return;
    }
  }
}
