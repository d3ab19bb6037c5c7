/**
 * Lane `chain`: keeps fork choice from the source's head and the finality lane's finalized block,
 * and appends `apply / undo / finalize` moves to the chain journal — the one ordered truth every
 * processor follows. A reorg deeper than `chain.max_reorg_depth`, or one that contradicts
 * finalized material, fails closed: no further moves are published, the lane reports degraded
 * (readiness drops) with the reason, and nothing finalized is ever undone. A finalized block off the canonical
 * branch waits (pending) for the live chain to reach it, and fails closed once the head has moved more than
 * `chain.max_reorg_depth` blocks on since that disagreement began.
 *
 * Accepts: ChainInbox (messages.ts): HeadNotice (from `source`), FinalizedNotice (from `finality`), ask `status`.
 * Sends: JournalNotice (messages.ts) to every processor actor and JSON-RPC listener.
 */
import { defineActor, unknownTag, type ActorContext } from '../../runtime/actor.js';
import { LinkClosedError } from '../../runtime/link.js';
import { openStore, type Store } from '../../store/store.js';
import type { ChainInbox, ChainReplies, HeadNotice, JournalNotice } from './messages.js';
import type { ProcessorInbox } from '../processor/messages.js';
import { ForkChoiceError, offBranchFinalized, planHead } from './fork-choice.js';
import type { BlockRef } from '../../store/chain-types.js';
import { backfillTxIndex, chainView, commitFinalized, commitHead, loadChainState, type ChainState } from './journal-writer.js';
import { createChainMetrics, type ChainMetrics } from './metrics.js';

export interface ChainArgs {
  readonly dataDir: string;
  readonly maxReorgDepth: number;
  /** Actor names that follow the journal and get every JournalNotice: the processors and the JSON-RPC listeners. */
  readonly processors: readonly string[];
}

interface State {
  readonly store: Store;
  readonly chain: ChainState;
  failed: string | null;
  pendingFinalized: BlockRef | null;
  /** The head's number when finality first named a block off the canonical branch (null: no such report waiting). */
  offBranchSince: number | null;
  readonly metrics: ChainMetrics;
}

/** Why the lane failed closed, as the metric's label. */
type FailCause = 'finalized_contradiction' | 'reorg_too_deep';

type Ctx = ActorContext<ChainArgs>;

function failClosed(ctx: Ctx, state: State, reason: string, cause: FailCause = 'finalized_contradiction'): void {
  if (state.failed !== null) return;
  state.failed = reason;
  state.metrics.failedClosed.set({ cause }, 1);
  ctx.log.error('chain failed closed: publication stopped', { reason });
  ctx.degraded(`failed closed: ${reason}`);
}

/**
 * Tells every follower the journal grew. A follower whose lane is gone for good (a failed lane, or at
 * shutdown, where the listeners stop before this lane) cannot take notices; the others still get
 * theirs, and nothing is lost: the journal is durable and a follower reads it from its own position.
 */
async function notifyProcessors(ctx: Ctx, state: State): Promise<void> {
  const notice: JournalNotice = { type: 'journal', sequence: state.chain.sequence };
  const sent = await Promise.allSettled(ctx.args.processors.map((name) => ctx.send<ProcessorInbox>(name, notice)));
  for (const result of sent) {
    if (result.status === 'rejected' && !(result.reason instanceof LinkClosedError)) throw result.reason;
  }
}

async function onHead(ctx: Ctx, state: State, notice: HeadNotice): Promise<void> {
  if (state.failed !== null) return;
  let plan;
  try {
    plan = planHead(chainView(state.store, state.chain), { number: notice.number, hash: notice.hash }, ctx.args.maxReorgDepth);
  } catch (error) {
    if (error instanceof ForkChoiceError && error.reason !== 'missing_material') return failClosed(ctx, state, error.message, error.reason === 'reorg_too_deep' ? 'reorg_too_deep' : 'finalized_contradiction');
    throw error;
  }
  if (plan.undo.length === 0 && plan.apply.length === 0) return;
  await commitHead(state.store, state.chain, plan);
  if (plan.undo.length > 0) {
    if (plan.commonAncestor === null) ctx.log.warn('the upstream abandoned the unfinalized block this chain began at: replaced from there', { depth: plan.undo.length, from: plan.apply[0]!.number, newHead: notice.number });
    else ctx.log.info('reorg', { depth: plan.undo.length, commonAncestor: plan.commonAncestor.number, newHead: notice.number });
  }
  if (state.pendingFinalized) await onFinalized(ctx, state, state.pendingFinalized, false);
  await notifyProcessors(ctx, state);
}

async function onFinalized(ctx: Ctx, state: State, finalized: BlockRef, notify = true): Promise<void> {
  if (state.failed !== null) return;
  const current = state.chain.finalized;
  if (current && finalized.number < current.number) return;
  if (current && finalized.number === current.number) {
    if (finalized.hash !== current.hash) failClosed(ctx, state, `finality reports block ${finalized.number} as ${finalized.hash}, but ${current.hash} was already finalized`);
    return;
  }
  const canonical = chainView(state.store, state.chain).canonicalHash(finalized.number);
  if (canonical === undefined) {
    const belowAnchor = state.chain.anchor !== null && finalized.number < state.chain.anchor;
    state.pendingFinalized = belowAnchor ? null : finalized;
    return;
  }
  if (canonical !== finalized.hash) {
    // Deeper than chain.max_reorg_depth below the head, the live chain can never move to the finalized branch: they
    // disagree. Shallower, the live source may not have reached that branch yet, or the report was read from a view
    // a reorg has just replaced (devnet finality over p2p: the canonical block `finality_lag` below the source's
    // head): the report waits, checked again on each new head and report, while the head moves up to
    // chain.max_reorg_depth blocks on from where it was when the disagreement began.
    const head = state.chain.head?.number ?? finalized.number;
    state.offBranchSince ??= head;
    if (offBranchFinalized(head, finalized.number, state.offBranchSince, ctx.args.maxReorgDepth) === 'wait') {
      if (state.pendingFinalized?.hash !== finalized.hash) ctx.log.info('finality names a block off the canonical branch; waiting for the live chain to reach it', { number: finalized.number, hash: finalized.hash, canonical, head });
      state.pendingFinalized = finalized;
      return;
    }
    failClosed(ctx, state, `finality reports block ${finalized.number} as ${finalized.hash}, which contradicts the canonical ${canonical}`);
    return;
  }
  state.pendingFinalized = null;
  state.offBranchSince = null;
  await commitFinalized(state.store, state.chain, finalized);
  if (notify) await notifyProcessors(ctx, state);
}

export default defineActor<State, ChainArgs, ChainInbox>({
  async init(ctx) {
    const store = openStore({ dataDir: ctx.args.dataDir });
    const chain = loadChainState(store);
    const indexed = await backfillTxIndex(store);
    if (indexed > 0) ctx.log.info('transaction index backfilled', { blocks: indexed });
    ctx.log.info('chain state', { head: chain.head?.number ?? null, finalized: chain.finalized?.number ?? null, journal: chain.sequence });
    ctx.ready();
    const metrics = createChainMetrics(ctx.metrics);
    for (const cause of ['finalized_contradiction', 'reorg_too_deep'] satisfies FailCause[]) metrics.failedClosed.set({ cause }, 0);
    return { store, chain, failed: null, pendingFinalized: null, offBranchSince: null, metrics };
  },
  async handle(message, state, ctx) {
    switch (message.type) {
      case 'head':
        return onHead(ctx, state, message);
      case 'finalized':
        return onFinalized(ctx, state, { number: message.number, hash: message.hash });
      case 'status':
        return { head: state.chain.head, finalized: state.chain.finalized, pendingFinalized: state.pendingFinalized, journalSequence: state.chain.sequence, failed: state.failed } satisfies ChainReplies['status'];
      default:
        throw new Error(`chain does not accept '${unknownTag(message)}'`);
    }
  },
  async stop(state) {
    await state.store.close();
  },
});
