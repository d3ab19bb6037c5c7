/**
 * Lane `processor.<id>`: one processor instance. Tails the chain journal from its own committed
 * position and commits each batch of moves in one transaction (see commit.ts); then tells every
 * listener that its change log grew. Restarting at any moment resumes from the committed position.
 *
 * Accepts: ProcessorInbox (messages.ts; replies ProcessorReplies): JournalNotice (from `chain`), ask `status`, asks `checkpoint.restore`, `savepoint.create`, `savepoint.delete`,
 *          `artifacts.replay`, `artifacts.release`, `artifacts.pin` (from listeners), `backfill.failed` (from `history`), ask `history.apply` (from `history`: a materialization job's
 *          chunk, see history-apply.ts) → { applied, skipped },
 *          ask `history.publish` (from `history`: a backfill subscription's chunk, see history-publish.ts) → { published, filled, streamHead, publishedThrough }.
 * `history_mode = "on_demand"`: a new instance starts at the journal head (its live lane starts at once; history
 * comes only from explicit materialization jobs).
 * Sends: ChangesNotice (actors/listener/messages.ts) to every listener actor; `backfill.wake` to `history`.
 */
import { defineActor, unknownTag, type ActorContext } from '../../runtime/actor.js';
import { openStore, type Store, type ProcessorTables } from '../../store/store.js';
import { readProgress, readRanges, writeProgress, type CoverageState, type ProcessorProgress } from '../../store/coverage.js';
import type { ChangesNotice, ListenerInbox } from '../listener/messages.js';
import type { HistoryInbox } from '../history/messages.js';
import type { ProcessorInbox, ProcessorReplies } from './messages.js';
import { commitMoves, readMoves, type CommitContext } from './commit.js';
import { kindContext } from '../kinds/sdk/kind-context.js';
import { resolveKind } from '../kinds/kind-catalog.js';
import type { KindOptions } from '../kinds/sdk/kind.js';
import { restoreCheckpoint, type CheckpointPolicy } from './checkpoint.js';
import { createSavepoint, deleteSavepoint, seedFromSavepoint, type SavepointIdentity } from './savepoint.js';
import { applyHistoryBlocks } from './history-apply.js';
import { publishHistoryBlocks } from './history-publish.js';
import { backfillPending, COLD_WAIT, coldWaitReason, planColdBackfill, settleColdBackfill } from './cold-backfill.js';
import { NO_ARTIFACTS, type ArtifactPolicy } from './artifacts.js';
import { BatchArtifactBudgetExceeded, type CommitResult } from './commit.js';
import { replayArtifacts } from './artifact-replay.js';
import { addClaims, releaseClaims } from '../../store/artifacts.js';
import { createProcessorMetrics, type ProcessorMetrics } from './metrics.js';
import { CodedError } from '../../runtime/errors.js';
import { journalHead } from '../../store/chain-heads.js';

export interface ProcessorArgs {
  readonly dataDir: string;
  readonly id: string;
  readonly kind: string;
  readonly instance: string;
  readonly chainId: number;
  readonly network: string;
  readonly startBlock: number | null;
  /** Actor names of the listeners to notify. */
  readonly listeners: readonly string[];
  /** Journal moves per transaction while catching up. */
  readonly batchMoves: number;
  /** The kind's own `[[processors]]` options (e.g. erc20 `tokens`). */
  readonly options: KindOptions;
  /** A custom kind's module (absolute path); its compiled copy is cached under the data directory. */
  readonly module?: string;
  /** `checkpoint_every_blocks` (0: none) and `checkpoints_retained`. */
  readonly checkpoints: CheckpointPolicy;
  /** `seed_savepoint`: a savepoint archive (absolute path) that seeds this instance when it has no state yet. */
  readonly seedSavepoint?: string;
  /** Schedule and genesis of the served chain (see kinds.ts). */
  readonly chain: Parameters<typeof kindContext>[1];
  /** `history_mode` (default live_only). */
  readonly historyMode?: 'live_only' | 'on_demand';
  /** The history source of a cold backfill (cold-backfill.ts): set for a node_owned, non-on_demand instance with a start_block when a source is configured. */
  readonly coldBackfillSource?: string;
  /** `[processors.artifacts]` and `[budgets.artifacts]` (absent: none kept). */
  readonly artifacts?: ArtifactPolicy;
  /** `artifacts.replay_from`: the instance whose artifacts feed this one (it follows no journal). */
  readonly replayFrom?: string;
  /**
   * A rebuild's replacement instance (actors/history/rebuilds.ts), started after the chain lane: it is not on the
   * chain lane's notice list, so it reads the journal head this often instead.
   */
  readonly pollJournalMs?: number;
}

interface State {
  readonly identity: SavepointIdentity;
  readonly store: Store;
  readonly tables: ProcessorTables;
  readonly commit: CommitContext;
  progress: ProcessorProgress;
  target: number;
  running: boolean;
  /** After a cold backfill completes: the journal position the held-back moves run to (`catching_up` until then). */
  catchUpTo: number | null;
  /** The reason the cold-backfill job failed (the history lane tells; cleared by the next history chunk): state `degraded`. */
  backfillFailure: string | null;
  /** A new instance whose cold backfill cannot be planned yet (COLD_WAIT): it applies nothing until it can. */
  coldPlanPending: boolean;
  readonly metrics: ProcessorMetrics;
  /** Why the lane waits: the next block's artifact does not fit `[budgets.artifacts]` (null: not waiting). */
  artifactBlocked: string | null;
  /** The retry of a lane waiting for artifact room. */
  retryTimer: NodeJS.Timeout | null;
  /** The source instance's tables of a replay target. */
  readonly replaySource: ProcessorTables | null;
  poll?: NodeJS.Timeout;
}

/** How often a lane waiting for artifact room tries its block again (a release, pruning or restart makes room). */
const ARTIFACT_RETRY_MS = 500;

type Ctx = ActorContext<ProcessorArgs>;

async function setState(state: State, coverageState: CoverageState, ctx?: Ctx, reason: string | null = null): Promise<void> {
  if (state.progress.state === coverageState && state.progress.stateReason === reason) return;
  ctx?.log.info('processor state', { instance: state.commit.instance, from: state.progress.state, state: coverageState, ...(reason ? { reason } : {}) });
  state.progress = { ...state.progress, state: coverageState, stateReason: reason };
  const progress = state.progress;
  await state.store.write(() => writeProgress(state.tables.state, { ...readProgress(state.tables.state), state: progress.state, stateReason: progress.stateReason }));
}

/** The next block's artifact does not fit the budget: `degraded` with the reason, and a retry later. */
async function waitForArtifactRoom(ctx: Ctx, state: State, reason: string): Promise<void> {
  if (state.artifactBlocked === null) ctx.log.warn('processor waits for artifact budget', { instance: ctx.args.instance, reason });
  state.artifactBlocked = reason;
  await setState(state, 'degraded', ctx, reason);
  state.retryTimer ??= setTimeout(() => {
    state.retryTimer = null;
    void run(ctx, state).catch((error: unknown) => setImmediate(() => { throw error; }));
  }, ARTIFACT_RETRY_MS);
}

/** Commits `moves`, or as many of the first as fit the artifact budget; null when not even the first fits (the lane waits). */
async function commitWithinBudget(ctx: Ctx, state: State, moves: ReturnType<typeof readMoves>): Promise<CommitResult | null> {
  let batch = moves;
  for (;;) {
    try {
      const result = await commitMoves(state.commit, batch, new Date().toISOString());
      if (state.artifactBlocked !== null) {
        ctx.log.info('processor resumes after artifact budget wait', { instance: ctx.args.instance });
        state.artifactBlocked = null;
      }
      return result;
    } catch (error) {
      if (!(error instanceof BatchArtifactBudgetExceeded)) throw error;
      if (error.moveIndex === 0) {
        await waitForArtifactRoom(ctx, state, error.message);
        return null;
      }
      batch = batch.slice(0, error.moveIndex);
    }
  }
}

/** An on_demand instance that has never committed anything begins at the journal head: its history waits for jobs. */
async function startAtJournalHead(store: Store, tables: ProcessorTables): Promise<void> {
  await store.write(() => {
    const progress = readProgress(tables.state);
    if (progress.journalSequence !== 0 || progress.changeSequence !== 0n || readRanges(tables.coverage).length > 0) return;
    writeProgress(tables.state, { ...progress, journalSequence: journalHead(store) });
  });
}

/** While a cold backfill is pending: `backfilling`, or `degraded` after its job failed (a wrong block, say; see the job's lastError). */
function backfillState(state: State): CoverageState {
  return state.backfillFailure === null ? 'backfilling' : 'degraded';
}

/** Applies journal moves until the instance reaches the journal head it has been told about. */
async function run(ctx: Ctx, state: State): Promise<void> {
  if (state.running || state.replaySource !== null) return;
  state.running = true;
  try {
    if (state.coldPlanPending && !(await planPendingBackfill(ctx, state))) return;
    // A cold backfill: block-local kinds run their live lane beside it; ordered-state kinds hold it (their state
    // waits for the history below, which reduces first in chain order).
    const pending = backfillPending(state.progress);
    if (pending && state.commit.ordering === 'ordered_state') {
      await setState(state, backfillState(state), ctx);
      return;
    }
    while (state.progress.journalSequence < state.target) {
      const behind = state.target - state.progress.journalSequence;
      const catchingUp = state.catchUpTo !== null && state.progress.journalSequence < state.catchUpTo;
      // While waiting for artifact room the state stays `degraded` with the reason until a block commits.
      if (state.artifactBlocked === null) await setState(state, backfillPending(state.progress) ? backfillState(state) : catchingUp || behind > ctx.args.batchMoves ? 'catching_up' : 'live', ctx);
      const moves = readMoves(state.store, state.progress.journalSequence, Math.min(behind, ctx.args.batchMoves));
      if (moves.length === 0) break;
      const started = performance.now();
      const result = await commitWithinBudget(ctx, state, moves);
      if (result === null) return;
      const commitSeconds = (performance.now() - started) / 1000;
      state.metrics.commitSeconds.observe(commitSeconds);
      state.metrics.journalMoves.inc(result.moves);
      state.progress = result.progress;
      if (result.changes > 0) {
        const committedAt = performance.timeOrigin + started + commitSeconds * 1000;
        const notice: ChangesNotice = { type: 'changes', processor: ctx.args.id, sequence: Number(result.progress.changeSequence), committedAt };
        await Promise.all(ctx.args.listeners.map((listener) => ctx.send<ListenerInbox>(listener, notice).catch((error: Error) => {
          // A listener that is down reads the log when it is back; the commit stands.
          ctx.log.debug('listener not notified', { listener, reason: error.message });
        })));
      }
    }
    state.catchUpTo = null;
    await setState(state, backfillPending(state.progress) ? backfillState(state) : 'live', ctx);
  } finally {
    state.running = false;
  }
}

/** Logs a planned backfill and wakes the history lane for it. */
function announceBackfill(ctx: Ctx, backfill: { fromBlock: number; targetBlock: number; source: string; completed: boolean }): void {
  ctx.log.info('cold backfill', { instance: ctx.args.instance, fromBlock: backfill.fromBlock, targetBlock: backfill.targetBlock, source: backfill.source, completed: backfill.completed });
  // The history lane finds the backfill in the store when it starts; this only wakes it if it runs already.
  if (!backfill.completed) ctx.send<HistoryInbox>('history', { type: 'backfill.wake', processor: ctx.args.id }).catch(() => undefined);
}

/** Plans a cold backfill that had to wait (COLD_WAIT) after new journal moves; false while it still must wait. */
async function planPendingBackfill(ctx: Ctx, state: State): Promise<boolean> {
  const planned = await planColdBackfill(state.store, state.tables, ctx.args.startBlock!, ctx.args.coldBackfillSource!);
  if (planned === COLD_WAIT) {
    // The numbers in the reason move with the journal (a first finalized block, still below the recorded chain).
    await setState(state, 'starting', ctx, coldWaitReason(state.store, ctx.args.startBlock!));
    return false;
  }
  state.coldPlanPending = false;
  state.progress = await settleColdBackfill(state.store, state.tables);
  // The wait is over: a planned backfill recorded its own state; a start the journal reaches keeps `starting`, now without the reason.
  if (state.progress.state === 'starting' && state.progress.stateReason !== null) await setState(state, 'starting', ctx, null);
  if (planned) announceBackfill(ctx, planned);
  return true;
}

export default defineActor<State, ProcessorArgs, ProcessorInbox>({
  async init(ctx) {
    const store = openStore({ dataDir: ctx.args.dataDir });
    const tables = store.processor(ctx.args.instance);
    // A module that does not load fails this lane's start: the supervisor restarts it and, past its intensity, marks it failed with this reason.
    const kind = await resolveKind({ kind: ctx.args.kind, module: ctx.args.module }, ctx.args.dataDir);
    const identity: SavepointIdentity = {
      chainId: ctx.args.chainId, genesisHash: ctx.args.chain.genesis.hash,
      processor: { id: ctx.args.id, instance: ctx.args.instance, kind: kind.name, version: kind.version, changeSchema: kind.changeSchema, options: ctx.args.options },
    };
    // A savepoint seeds only a new instance; one that does not fit fails this lane's start with the reason.
    if (ctx.args.seedSavepoint !== undefined) {
      if (kind.ordering !== 'ordered_state') throw new Error(`processor '${ctx.args.id}' is block-local: only ordered-state instances are seeded from savepoints`);
      await seedFromSavepoint({ store, tables }, ctx.args.seedSavepoint, identity);
    }
    const seed = readProgress(tables.state).seed;
    const artifactPolicy = ctx.args.artifacts ?? NO_ARTIFACTS;
    if (artifactPolicy.retention !== 'none' && kind.deltaSchema === null) {
      throw new Error(`processor '${ctx.args.id}': artifacts.retention = "${artifactPolicy.retention}" needs a kind with a map/apply split, and kind '${kind.name}' has none (declare map and applyMapped)`);
    }
    const commit: CommitContext = {
      artifacts: { policy: artifactPolicy, peers: artifactPolicy.peers.map((peer) => store.processor(peer).artifacts) },
      store, tables, kind: kind.bind(ctx.args.options), changeSchema: kind.changeSchema, needs: kind.needs, ordering: kind.ordering, checkpoints: ctx.args.checkpoints, kindContext: kindContext(tables, ctx.args.chain), instance: ctx.args.instance, chainId: ctx.args.chainId,
      // A seeded instance starts after its savepoint's block.
      startBlock: seed ? Math.max(ctx.args.startBlock ?? 0, seed.blockNumber + 1) : ctx.args.startBlock,
    };
    if (ctx.args.historyMode === 'on_demand') await startAtJournalHead(store, tables);
    let planned: Awaited<ReturnType<typeof planColdBackfill>>;
    if (ctx.args.coldBackfillSource !== undefined && ctx.args.startBlock !== null) {
      planned = await planColdBackfill(store, tables, ctx.args.startBlock, ctx.args.coldBackfillSource);
      if (planned === COLD_WAIT) {
        ctx.log.info('cold backfill waits: the chain has no finalized block at or above start_block yet, and its first recorded block is above it', { instance: ctx.args.instance, startBlock: ctx.args.startBlock });
      }
    }
    const settled = await settleColdBackfill(store, tables);
    if (backfillPending(settled)) ctx.log.info('processor state', { instance: ctx.args.instance, from: null, state: settled.state });
    const state: State = {
      identity, store, tables, commit, progress: settled, target: journalHead(store), running: false, catchUpTo: null, backfillFailure: null, coldPlanPending: planned === COLD_WAIT,
      metrics: createProcessorMetrics(ctx.metrics),
      artifactBlocked: null, retryTimer: null,
      replaySource: ctx.args.replayFrom !== undefined ? store.processor(ctx.args.replayFrom) : null,
    };
    ctx.log.info('processor resumes', { instance: ctx.args.instance, journalSequence: state.progress.journalSequence, changeSequence: state.progress.changeSequence.toString(), journalHead: state.target });
    ctx.ready();
    // A replay target follows no journal: its blocks come from replayed artifacts only.
    if (state.replaySource !== null) await setState(state, 'live', ctx);
    if (planned !== undefined && planned !== COLD_WAIT) announceBackfill(ctx, planned);
    if (planned === COLD_WAIT) await setState(state, 'starting', ctx, coldWaitReason(store, ctx.args.startBlock!));
    setImmediate(() => void run(ctx, state).catch((error: unknown) => setImmediate(() => { throw error; })));
    if (ctx.args.pollJournalMs !== undefined) {
      state.poll = setInterval(() => {
        const head = journalHead(store);
        if (head <= state.target) return;
        state.target = head;
        void run(ctx, state).catch((error: unknown) => setImmediate(() => { throw error; }));
      }, ctx.args.pollJournalMs);
      state.poll.unref();
    }
    return state;
  },
  async handle(message, state, ctx) {
    switch (message.type) {
      case 'journal':
        state.target = Math.max(state.target, message.sequence);
        return run(ctx, state);
      case 'history.apply': {
        const result = await applyHistoryBlocks(state.commit, message, new Date().toISOString());
        state.backfillFailure = null;
        state.progress = {
          ...state.progress,
          changeSequence: result.progress.changeSequence > state.progress.changeSequence ? result.progress.changeSequence : state.progress.changeSequence,
          configuredStartBlock: result.progress.configuredStartBlock,
          ...(result.progress.coldBackfill ? { coldBackfill: result.progress.coldBackfill } : {}),
          ...(state.commit.ordering === 'ordered_state' ? { reduceCursor: result.progress.reduceCursor } : {}),
        };
        if (result.changes > 0) {
          const notice: ChangesNotice = { type: 'changes', processor: ctx.args.id, sequence: Number(result.progress.changeSequence), committedAt: performance.timeOrigin + performance.now() };
          await Promise.all(ctx.args.listeners.map((listener) => ctx.send<ListenerInbox>(listener, notice).catch(() => undefined)));
        }
        if (result.backfillCompleted) {
          ctx.log.info('cold backfill completed', { instance: ctx.args.instance, ...result.progress.coldBackfill });
          // The moves held back (ordered-state) or arriving meanwhile are caught up before the lane reports live.
          state.catchUpTo = state.target;
          setImmediate(() => void run(ctx, state).catch((error: unknown) => setImmediate(() => { throw error; })));
        }
        return { applied: result.applied, skipped: result.skipped } satisfies ProcessorReplies['history.apply'];
      }
      case 'history.publish': {
        // A backfill subscription's chunk (history-publish.ts): into its stream, and into the instance where not covered.
        const result = await publishHistoryBlocks(state.commit, message, new Date().toISOString());
        state.progress = {
          ...state.progress,
          changeSequence: result.progress.changeSequence > state.progress.changeSequence ? result.progress.changeSequence : state.progress.changeSequence,
          configuredStartBlock: result.progress.configuredStartBlock,
        };
        if (result.changes > 0) {
          const notice: ChangesNotice = { type: 'changes', processor: ctx.args.id, sequence: Number(result.progress.changeSequence), committedAt: performance.timeOrigin + performance.now() };
          await Promise.all(ctx.args.listeners.map((listener) => ctx.send<ListenerInbox>(listener, notice).catch(() => undefined)));
        }
        return { published: result.published, filled: result.filled, streamHead: result.streamHead, publishedThrough: result.publishedThrough } satisfies ProcessorReplies['history.publish'];
      }
      case 'backfill.failed': {
        // The cold-backfill job failed: its chunk committed nothing; the job's lastError names the block and why.
        if (!backfillPending(state.progress)) return { degraded: false };
        if (state.backfillFailure === message.message) return { degraded: true };
        state.backfillFailure = message.message;
        ctx.log.warn('cold backfill failed', { instance: ctx.args.instance, job: message.job, blockNumber: message.blockNumber, reason: state.backfillFailure });
        if (!state.running) await setState(state, 'degraded', ctx);
        return { degraded: true };
      }
      case 'artifacts.replay': {
        if (state.replaySource === null) throw new CodedError('unsupported_capability', `processor '${ctx.args.id}' is not a replay target (set [processors.artifacts] replay_from on it)`);
        const result = await replayArtifacts(state.commit, state.replaySource, message, new Date().toISOString());
        state.progress = result.progress;
        if (result.changes > 0) {
          const notice: ChangesNotice = { type: 'changes', processor: ctx.args.id, sequence: Number(result.progress.changeSequence), committedAt: performance.timeOrigin + performance.now() };
          await Promise.all(ctx.args.listeners.map((listener) => ctx.send<ListenerInbox>(listener, notice).catch(() => undefined)));
        }
        const { progress: _progress, changes: _changes, ...answer } = result;
        return answer;
      }
      case 'artifacts.release': {
        const owner = { ownerKind: message.ownerKind, ownerId: message.ownerId };
        const released = await state.store.write(() => releaseClaims(state.tables.artifacts, owner, message.fromBlock, message.toBlock));
        // Room was made: a lane waiting for it tries its block now.
        if (state.artifactBlocked !== null) setImmediate(() => void run(ctx, state).catch((error: unknown) => setImmediate(() => { throw error; })));
        return { ...released, freedBytes: String(released.freedBytes) } satisfies ProcessorReplies['artifacts.release'];
      }
      case 'artifacts.pin': {
        const owner = { ownerKind: 'operator_pin' as const, ownerId: message.ownerId };
        const pinned = await state.store.write(() => addClaims(state.tables.artifacts, owner, message.fromBlock, message.toBlock));
        return { pinned };
      }
      case 'checkpoint.restore':
        return restoreCheckpoint(state.commit, message.checkpoint);
      case 'savepoint.create':
        return createSavepoint(state.commit, state.identity, message.id, new Date().toISOString());
      case 'savepoint.delete':
        return deleteSavepoint(state.commit, message.id);
      case 'status':
        return { ...state.progress, changeSequence: state.progress.changeSequence.toString(), target: state.target };
      default:
        throw new Error(`processor does not accept '${unknownTag(message)}'`);
    }
  },
  async stop(state) {
    if (state.retryTimer !== null) clearTimeout(state.retryTimer);
    clearInterval(state.poll);
    while (state.running) await new Promise((resolve) => setTimeout(resolve, 10));
    await state.store.close();
  },
});
