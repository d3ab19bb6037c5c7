/**
 * Processor rebuilds (spec §9.5, `POST /admin/v1/processors/{processor}/rebuild`), the history lane's side:
 *
 * 1. Create: a new immutable instance `<configured instance>~r<n>` with its own tables gets a processor lane beside
 *    the serving instance (the root starts it, actors/node/lanes.ts `replacementLane`). It is a cold backfill: the
 *    lane plans [fromBlock, finalized F] from the history source and follows the journal after F
 *    (actors/processor/cold-backfill.ts), and this lane runs the history as the job `cb-<instance>`. The serving
 *    instance keeps serving and following live. Queries of the replacement answer 409 `processor_rebuilding`.
 * 2. Compare: once the replacement is live with its backfill complete, the outputs of both instances are compared
 *    over the finalized blocks both cover (rebuild-compare.ts); the result is recorded and the rebuild is `ready`.
 * 3. Promote (only when asked): the outbox moves the processor's durable consumers to the replacement and makes it
 *    the serving instance in one transaction (actors/outbox/consumer-move.ts). Outputs that differ need
 *    `acceptDifferences: true` (a rebuild that changes semantics).
 * 4. Rollback: selects the previous instance again the same way; neither instance is ever deleted or mutated by it,
 *    and both keep following the chain.
 *
 * 5. Cancel: a rebuild whose replacement serves nothing (not the serving instance, not the rollback target of a
 *    promoted rebuild) becomes `cancelled`: its cold-backfill job is cancelled with it, and the root stops its lane
 *    (runtime stopLane: the open commit finishes, queued messages are dropped); it is never started again.
 * 6. Delete: a cancelled rebuild is removed with its replacement's tables (dropped), consumer records and job, in
 *    one transaction (store/rebuilds.ts deleteRebuild); its instance name is retired, never given again.
 *
 * Records survive restarts (store/rebuilds.ts); the replacement's progress is its coverage, so a restart resumes the
 * backfill from its committed chunks. Rebuild states advance on the cold-backfill scan of the history lane.
 */
import type { ActorContext } from '../../runtime/actor.js';
import { CodedError } from '../../runtime/errors.js';
import { readProgress, readRanges } from '../../store/coverage.js';
import type { Store } from '../../store/store.js';
import { readJob } from '../../store/history-jobs.js';
import {
  ACTIVE_REBUILD_STATES, cancelRebuildRecord, createRebuild, deleteRebuild, listRebuilds, readRebuild, rebuildIdForKey, rebuildOfInstance, retiredInstances,
  servingInstance, updateRebuild, type RebuildDeletion, type RebuildRecord,
} from '../../store/rebuilds.js';
import { TERMINAL_JOB_STATES } from '../../store/history-jobs.js';
import { coldJobId } from './cold-backfill.js';
import { missingCount } from './job-ranges.js';
import { compareInstances } from './rebuild-compare.js';
import type { HistoryProcessorArgs } from './actor.js';
import type { NodeInbox, NodeReplies } from '../node/messages.js';
import type { CreateRebuildRequest } from './messages.js';
import type { OutboxInbox, OutboxReplies } from '../outbox/messages.js';
import { chosenSource, type SourceChoice } from './source-choice.js';

export interface RebuildLaneState extends SourceChoice {
  readonly store: Store;
  readonly processors: Map<string, HistoryProcessorArgs>;
}

type Ctx = ActorContext<unknown>;

/** The history lane's entry for a replacement: the rebuilt processor's ordering, node-owned, live after its backfill. */
function replacementEntry(base: HistoryProcessorArgs, record: RebuildRecord): HistoryProcessorArgs {
  return { id: record.instance, instance: record.instance, historyMode: 'live_only', historyControl: 'node_owned', ordering: base.ordering, startBlock: record.fromBlock };
}

/** At start: every recorded replacement of a configured processor, unless cancelled, joins the processors this lane backfills. */
export function registerReplacements(state: RebuildLaneState): void {
  for (const record of listRebuilds(state.store)) {
    if (record.state === 'cancelled') continue;
    const base = state.processors.get(record.processor);
    if (base) state.processors.set(record.instance, replacementEntry(base, record));
  }
}

/** The configured processor whose queries and consumers `instance` would serve, for the processor's own id. */
function configured(state: RebuildLaneState, id: string): HistoryProcessorArgs {
  const processor = state.processors.get(id);
  // Replacements are registered under their instance id; they are not processors of their own.
  if (!processor || rebuildOfInstance(state.store, id) !== undefined) {
    throw new CodedError('not_found', `no processor '${id.slice(0, 80)}'`, { processor: id.slice(0, 80) });
  }
  return processor;
}

export function currentServing(store: Store, processor: HistoryProcessorArgs): string {
  return servingInstance(store, processor.id) ?? processor.instance;
}

export async function createProcessorRebuild(ctx: Ctx, state: RebuildLaneState, request: CreateRebuildRequest): Promise<{ created: boolean; rebuild: RebuildView }> {
  const processor = configured(state, request.processor);
  const source = chosenSource(state, request.source, `a rebuild backfills its replacement instance from a history source, so processor '${processor.id}' cannot be rebuilt`,
    { processor: processor.id, rule: 'rebuild_needs_history_source' });
  const digest = JSON.stringify({ processor: processor.id, source });
  const existingId = rebuildIdForKey(state.store, request.idempotencyKey);
  if (existingId !== undefined) {
    const existing = readRebuild(state.store, existingId);
    if (existing && existing.requestDigest === digest) return { created: false, rebuild: rebuildView(state, existing) };
    throw new CodedError('conflict', `idempotency key '${request.idempotencyKey.slice(0, 80)}' was used with another request (rebuild ${existingId})`, { rebuild: existingId });
  }
  if (processor.historyControl !== 'node_owned') {
    throw new CodedError('unsupported_capability', `processor '${processor.id}' has history_control = "${processor.historyControl}": its application schedules its history, and a rebuild is a node-owned backfill`, { processor: processor.id, historyControl: processor.historyControl });
  }
  const active = listRebuilds(state.store).find((r) => r.processor === processor.id && ACTIVE_REBUILD_STATES.has(r.state));
  if (active) {
    throw new CodedError('processor_rebuilding', `processor '${processor.id}' is already being rebuilt (${active.id}, ${active.state}); promote it or wait for it before starting another`, { processor: processor.id, rebuild: active.id, state: active.state });
  }
  const serving = currentServing(state.store, processor);
  const fromBlock = processor.startBlock ?? readProgress(state.store.processor(serving).state).configuredStartBlock;
  if (fromBlock === null) {
    throw new CodedError('conflict', `processor '${processor.id}' has no start_block and its serving instance has applied no block yet: there is no range to rebuild`, { processor: processor.id });
  }
  const taken = new Set([...state.store.processorInstances(), ...listRebuilds(state.store).map((r) => r.instance), ...retiredInstances(state.store)]);
  let n = listRebuilds(state.store).filter((r) => r.processor === processor.id).length + 1;
  while (taken.has(`${processor.instance}~r${n}`) || state.processors.has(`${processor.instance}~r${n}`)) n += 1;
  const record: RebuildRecord = {
    id: `rb-${processor.id}-${n}`, processor: processor.id, previousInstance: serving, instance: `${processor.instance}~r${n}`, source, fromBlock,
    idempotencyKey: request.idempotencyKey, requestDigest: digest, state: 'backfilling', createdAt: new Date().toISOString(),
    caughtUpAt: null, promotedAt: null, rolledBackAt: null, cancelledAt: null, comparison: null, lastError: null, movedConsumers: [],
  };
  await createRebuild(state.store, record);
  state.processors.set(record.instance, replacementEntry(processor, record));
  await startReplacementLane(ctx, record);
  ctx.log.info('rebuild created', { rebuild: record.id, processor: record.processor, instance: record.instance, previousInstance: serving, fromBlock, source });
  return { created: true, rebuild: rebuildView(state, record) };
}

async function startReplacementLane(ctx: Ctx, record: RebuildRecord): Promise<void> {
  await ctx.ask<NodeInbox>('node', { type: 'rebuild.lane', processor: record.processor, instance: record.instance, fromBlock: record.fromBlock, source: record.source }, 10_000);
}

export function existingRebuild(store: Store, processor: string, id: string): RebuildRecord {
  const record = readRebuild(store, id);
  if (!record || record.processor !== processor) throw new CodedError('not_found', `no rebuild '${id.slice(0, 80)}' of processor '${processor.slice(0, 80)}'`, { processor: processor.slice(0, 80), rebuild: id.slice(0, 80) });
  return record;
}

export function listProcessorRebuilds(state: RebuildLaneState, processor: string): { data: RebuildView[] } {
  configured(state, processor);
  return { data: listRebuilds(state.store).filter((r) => r.processor === processor).map((r) => rebuildView(state, r)) };
}

/** Moves the processor's consumers and serving instance from `from` to `to` (the outbox does both in one transaction). */
async function select(ctx: Ctx, record: RebuildRecord, from: string, to: string): Promise<RebuildRecord['movedConsumers']> {
  const answer = await ctx.ask<OutboxInbox, OutboxReplies['consumers.move']>('outbox', { type: 'consumers.move', processor: record.processor, from, to }, 30_000);
  return answer.moved;
}

export async function promoteRebuild(ctx: Ctx, state: RebuildLaneState, processorId: string, id: string, acceptDifferences: boolean): Promise<RebuildView> {
  const processor = configured(state, processorId);
  const record = existingRebuild(state.store, processorId, id);
  if (record.state === 'promoted') return rebuildView(state, record);
  if (record.state === 'backfilling' || record.state === 'comparing') {
    throw new CodedError('processor_rebuilding', `rebuild '${id}' is ${record.state}: instance '${record.instance}' cannot serve before it has caught up and been compared`, { rebuild: id, instance: record.instance, state: record.state });
  }
  if (record.state === 'failed' || record.state === 'cancelled') throw new CodedError('conflict', `rebuild '${id}' is ${record.state}; it cannot be promoted${record.state === 'failed' ? ' (see lastError)' : ''}`, { rebuild: id, state: record.state });
  if (record.comparison && !record.comparison.equal && !acceptDifferences) {
    throw new CodedError('conflict', `the outputs of '${record.instance}' differ from '${record.previousInstance}' from block ${record.comparison.firstDifference?.blockNumber ?? '?'} (${record.comparison.firstDifference?.reason ?? ''}); promote with acceptDifferences = true to serve them anyway`, {
      rebuild: id, comparison: record.comparison,
    });
  }
  const serving = currentServing(state.store, processor);
  if (serving !== record.previousInstance) {
    throw new CodedError('conflict', `processor '${processorId}' is served by '${serving}', not by '${record.previousInstance}' this rebuild replaces`, { rebuild: id, servingInstance: serving });
  }
  const moved = await select(ctx, record, record.previousInstance, record.instance);
  const next = await updateRebuild(state.store, id, (r) => ({ ...r, state: 'promoted', promotedAt: new Date().toISOString(), movedConsumers: moved }));
  ctx.log.info('rebuild promoted', { rebuild: id, processor: processorId, instance: record.instance, consumersMoved: moved.length });
  return rebuildView(state, next ?? record);
}

export async function rollbackRebuild(ctx: Ctx, state: RebuildLaneState, processorId: string, id: string): Promise<RebuildView> {
  const processor = configured(state, processorId);
  const record = existingRebuild(state.store, processorId, id);
  if (record.state === 'rolled_back') return rebuildView(state, record);
  if (record.state !== 'promoted') throw new CodedError('conflict', `rebuild '${id}' is ${record.state}; only a promoted rebuild can be rolled back`, { rebuild: id, state: record.state });
  const serving = currentServing(state.store, processor);
  if (serving !== record.instance) throw new CodedError('conflict', `processor '${processorId}' is served by '${serving}', not by this rebuild's '${record.instance}'`, { rebuild: id, servingInstance: serving });
  const moved = await select(ctx, record, record.instance, record.previousInstance);
  const next = await updateRebuild(state.store, id, (r) => ({ ...r, state: 'rolled_back', rolledBackAt: new Date().toISOString(), movedConsumers: moved }));
  ctx.log.info('rebuild rolled back', { rebuild: id, processor: processorId, instance: record.previousInstance, consumersMoved: moved.length });
  return rebuildView(state, next ?? record);
}

/**
 * Cancels a rebuild: `backfilling`, `comparing`, `ready`, `failed` or `rolled_back` → `cancelled` (terminal), with its
 * cold-backfill job, then stops the replacement's lane. Refused (409) while the replacement serves the processor or
 * is the instance a promoted rebuild would roll back to (spec §9.5: the old instance stays for rollback). Cancelling a
 * cancelled rebuild answers it again (and makes sure its lane is stopped: a crash may have come in between).
 */
export async function cancelProcessorRebuild(ctx: Ctx, state: RebuildLaneState, processorId: string, id: string): Promise<RebuildView> {
  const processor = configured(state, processorId);
  const record = existingRebuild(state.store, processorId, id);
  if (record.state !== 'cancelled') {
    const serving = currentServing(state.store, processor);
    if (serving === record.instance) {
      throw new CodedError('conflict', `rebuild '${id}' is ${record.state} and its instance '${record.instance}' serves processor '${processorId}'; roll it back before cancelling it`, { rebuild: id, state: record.state, servingInstance: serving });
    }
    const dependent = listRebuilds(state.store).find((r) => r.id !== id && r.previousInstance === record.instance && r.instance === serving);
    if (dependent) {
      throw new CodedError('conflict', `instance '${record.instance}' is what promoted rebuild '${dependent.id}' rolls back to; it stays while '${dependent.instance}' serves`, { rebuild: id, rollbackOf: dependent.id });
    }
  }
  const next = (await cancelRebuildRecord(state.store, id, coldJobId(record.instance))) ?? record;
  state.processors.delete(record.instance);
  const { stopped } = await ctx.ask<NodeInbox, NodeReplies['rebuild.stop']>('node', { type: 'rebuild.stop', instance: record.instance }, 120_000);
  if (record.state !== 'cancelled') ctx.log.info('rebuild cancelled', { rebuild: id, processor: processorId, instance: record.instance, previousState: record.state, laneStopped: stopped });
  return rebuildView(state, next);
}

/**
 * Deletes a cancelled rebuild: drops its replacement's tables and removes its records (store/rebuilds.ts deleteRebuild)
 * and says what was freed. Only a cancelled one (409 otherwise, as for jobs: cancel it first), and only once its
 * backfill job has stopped; the serving and previous instances are never deleted.
 */
export async function deleteProcessorRebuild(ctx: Ctx, state: RebuildLaneState, processorId: string, id: string): Promise<RebuildDeletion> {
  configured(state, processorId);
  const record = existingRebuild(state.store, processorId, id);
  if (record.state !== 'cancelled') {
    throw new CodedError('conflict', `rebuild '${id}' is ${record.state}; only a cancelled rebuild can be deleted (cancel it first)`, { rebuild: id, state: record.state });
  }
  const job = readJob(state.store, coldJobId(record.instance));
  if (job && !TERMINAL_JOB_STATES.has(job.state)) {
    throw new CodedError('conflict', `rebuild '${id}' is cancelled but its backfill job '${job.id}' is still finishing its chunk in flight; delete it once the job is cancelled`, { rebuild: id, job: job.id, jobState: job.state });
  }
  // Its lane is stopped by the cancel; asked again in case a crash came between the cancel and its stop.
  await ctx.ask<NodeInbox>('node', { type: 'rebuild.stop', instance: record.instance }, 120_000);
  const deletion = await deleteRebuild(state.store, record, coldJobId(record.instance));
  ctx.log.info('rebuild deleted', { rebuild: id, processor: processorId, instance: record.instance, tables: deletion.tables.length, entries: deletion.entries, consumers: deletion.consumers.length });
  return deletion;
}

/**
 * Advances each rebuild under way: a failed backfill job fails it; a replacement that is live with its backfill
 * complete is compared and the rebuild becomes `ready`. A promote or rollback interrupted between the outbox's
 * commit and this record's is finished from the serving instance.
 */
export async function advanceRebuilds(ctx: Ctx, state: RebuildLaneState): Promise<void> {
  for (const record of listRebuilds(state.store)) {
    const base = state.processors.get(record.processor);
    if (!base) continue;
    const serving = currentServing(state.store, base);
    if (serving === record.instance && record.state !== 'promoted') {
      await updateRebuild(state.store, record.id, (r) => ({ ...r, state: 'promoted', promotedAt: r.promotedAt ?? new Date().toISOString() }));
      continue;
    }
    if (record.state === 'promoted' && serving === record.previousInstance) {
      await updateRebuild(state.store, record.id, (r) => ({ ...r, state: 'rolled_back', rolledBackAt: r.rolledBackAt ?? new Date().toISOString() }));
      continue;
    }
    const job = readJob(state.store, coldJobId(record.instance));
    if (record.state === 'failed' && job !== undefined && job.state !== 'failed') {
      // The failed backfill job was deleted (its retry boundary) and created again: the rebuild goes on.
      await updateRebuild(state.store, record.id, (r) => ({ ...r, state: 'backfilling', lastError: null }));
      continue;
    }
    if (record.state !== 'backfilling' && record.state !== 'comparing') continue;
    if (job?.state === 'failed') {
      await updateRebuild(state.store, record.id, (r) => ({ ...r, state: 'failed', lastError: job.lastError }));
      ctx.log.warn('rebuild failed: its backfill job failed', { rebuild: record.id, job: job.id, reason: job.lastError?.message ?? null });
      continue;
    }
    if (!caughtUp(state.store, record)) continue;
    await updateRebuild(state.store, record.id, (r) => ({ ...r, state: 'comparing', caughtUpAt: r.caughtUpAt ?? new Date().toISOString() }));
    const comparison = compareInstances(state.store.processor(serving), state.store.processor(record.instance), record.fromBlock, new Date().toISOString());
    await updateRebuild(state.store, record.id, (r) => (r.state === 'comparing' ? { ...r, state: 'ready', comparison } : r));
    ctx.log.info('rebuild compared', { rebuild: record.id, equal: comparison.equal, fromBlock: comparison.fromBlock, toBlock: comparison.toBlock, firstDifference: comparison.firstDifference });
  }
}

/**
 * The replacement is live, its backfill complete, and its finalized block is above the backfill's target: the first
 * block its live lane applied (target + 1) is finalized too. Rows a kind writes once at an instance's first block
 * (blobs' fork schedule) are written by the replacement's live lane at that block; compared before it is final,
 * they would be outputs only the serving instance has.
 */
function caughtUp(store: Store, record: RebuildRecord): boolean {
  if (!store.processorInstances().includes(record.instance)) return false;
  const progress = readProgress(store.processor(record.instance).state);
  if (progress.state !== 'live' || progress.finalizedNumber === null) return false;
  if (!progress.coldBackfill) return progress.journalSequence > 0;
  return progress.coldBackfill.completed && progress.finalizedNumber > progress.coldBackfill.targetBlock;
}

export interface RebuildView {
  readonly id: string;
  readonly processor: string;
  readonly state: RebuildRecord['state'];
  readonly instance: string;
  readonly previousInstance: string;
  readonly servingInstance: string;
  readonly source: string;
  readonly fromBlock: number;
  readonly idempotencyKey: string;
  readonly createdAt: string;
  readonly caughtUpAt: string | null;
  readonly promotedAt: string | null;
  readonly rolledBackAt: string | null;
  readonly cancelledAt: string | null;
  readonly progress: {
    readonly instanceState: string;
    /** The finalized block the replacement's backfill runs to (null until its lane has planned it). */
    readonly targetBlock: number | null;
    readonly blocksDone: number;
    readonly blocksTotal: number;
    readonly job: string | null;
  };
  readonly comparison: RebuildRecord['comparison'];
  readonly movedConsumers: RebuildRecord['movedConsumers'];
  readonly lastError: RebuildRecord['lastError'];
}

export function rebuildView(state: RebuildLaneState, record: RebuildRecord): RebuildView {
  const store = state.store;
  const exists = store.processorInstances().includes(record.instance);
  const tables = exists ? store.processor(record.instance) : null;
  const progress = tables ? readProgress(tables.state) : null;
  const backfill = progress?.coldBackfill;
  const blocksTotal = backfill ? backfill.targetBlock - backfill.fromBlock + 1 : 0;
  const blocksDone = backfill && tables ? blocksTotal - missingCount(readRanges(tables.coverage), backfill.fromBlock, backfill.targetBlock) : 0;
  const base = state.processors.get(record.processor);
  return {
    id: record.id, processor: record.processor, state: record.state, instance: record.instance, previousInstance: record.previousInstance,
    servingInstance: servingInstance(store, record.processor) ?? base?.instance ?? record.previousInstance,
    source: record.source, fromBlock: record.fromBlock, idempotencyKey: record.idempotencyKey, createdAt: record.createdAt,
    caughtUpAt: record.caughtUpAt, promotedAt: record.promotedAt, rolledBackAt: record.rolledBackAt, cancelledAt: record.cancelledAt ?? null,
    progress: {
      instanceState: progress?.state ?? 'starting', targetBlock: backfill?.targetBlock ?? null, blocksDone, blocksTotal,
      job: readJob(store, coldJobId(record.instance)) ? coldJobId(record.instance) : null,
    },
    comparison: record.comparison, movedConsumers: record.movedConsumers, lastError: record.lastError,
  };
}
