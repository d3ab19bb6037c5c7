/**
 * One instance's publication (actors/publisher/actor.ts): read where its subject stands, publish a reset marker when
 * the subject cannot continue seamlessly (an ancestor store's epoch, or changes retention pruned unpublished), then
 * the change log in order, putting the processor's descriptor after every acknowledged batch; wait for a notice.
 */
import { JetStreamApiError } from '@nats-io/jetstream';
import { errorFields } from '../../runtime/log.js';
import { changeHead, changeTail } from '../../store/change-log.js';
import { publicationMessages } from '../../store/publication-messages.js';
import { ForeignPublisherError, type FencedPublisher, type ResetReason, type SubjectPosition } from '../../net/jetstream/fenced-publisher.js';
import { processorDescriptor } from '../../api/aggregate/configured-processors.js';
import { processorTables, readCoverage } from '../../api/aggregate/processor-reader.js';
import type { OutboxInbox } from '../outbox/messages.js';
import { commitTimeOf, pause, type Ctx, type Lane, type State } from './state.js';
import { servedInstance } from './extra-instances.js';

/** Messages published between checks of `stopped` and of new notices. */
const BATCH_MESSAGES = 64;
/** While an instance catches up, its descriptor is put at most this often (and always once it has caught up). */
const DESCRIPTOR_EVERY_MS = 250;

/** Why a publish or connection failed, for the error counter. */
export function reasonOf(error: unknown): string {
  if (error instanceof ForeignPublisherError) return 'foreign_publisher';
  if (error instanceof JetStreamApiError) return error.code === 10071 ? 'fence' : 'other';
  const text = `${(error as Error)?.name ?? ''} ${(error as Error)?.message ?? ''}`.toLowerCase();
  if (text.includes('timeout')) return 'timeout';
  if (/connection|connect|closed|disconnect|econnrefused|no responders/.test(text)) return 'connection';
  return 'other';
}

/** Puts the instance's descriptor: what relays answer hello frames, the change head and page coverage from. */
async function describe(ctx: Ctx, state: State, publisher: FencedPublisher, lane: Lane, published: bigint): Promise<void> {
  if (!state.descriptors || lane.kind === 'subscription') return;
  state.store.env.resetReadTxn();
  // Only the instance serving the processor id now speaks for it (a promote hands the key to the replacement).
  if (servedInstance(state.store, lane.processor.id, ctx.args.processors.find((p) => p.id === lane.processor.id)?.instance ?? lane.instance) !== lane.instance) return;
  await state.descriptors.put({
    format: 1, chainId: ctx.args.chainId, storeEpoch: state.store.epoch.toString(16), subject: publisher.subject(lane.instance),
    processor: processorDescriptor(lane.processor), coverage: readCoverage(state.store, ctx.args.chainId, lane.processor), published: published.toString(), updatedAt: new Date().toISOString(),
  });
}

/** The instance's change log, once its processor lane has created its tables (null: stopped first). */
async function changeLogOf(ctx: Ctx, state: State, instance: string) {
  while (!state.stopped) {
    const tables = processorTables(state.store, instance);
    if (tables) return { changes: tables.changes, epoch: state.store.epoch, chainId: ctx.args.chainId, instance };
    await pause(ctx.args.retryInitialMs, state);
    state.store.env.resetReadTxn();
  }
  return null;
}

/** The reset the subject needs before the changes after `at` follow it, and the first change after it; null: none. */
function resetNeeded(lane: Lane, at: SubjectPosition, tail: bigint | null, head: bigint): { reason: ResetReason; next: bigint } | null {
  // An ancestor's subject continues with this store's retained log (its cursors carry the new epoch).
  if (at.ancestorEpoch !== undefined) return { reason: 'epoch_changed', next: tail ?? head + 1n };
  if (at.subjectSequence > 0 && tail !== null && tail > at.lastChange + 1n) return { reason: 'retention_gap', next: tail };
  return null;
}

async function publishReset(ctx: Ctx, state: State, publisher: FencedPublisher, lane: Lane, at: SubjectPosition, reset: { reason: ResetReason; next: bigint }): Promise<SubjectPosition> {
  const { instance } = lane;
  if (reset.reason === 'retention_gap') state.metrics.publishErrors.inc({ instance, reason: 'retention_gap' });
  const after = await publisher.publishReset(instance, at, reset.reason, reset.next);
  lane.resets[reset.reason] += 1;
  state.metrics.resets.inc({ instance, reason: reset.reason });
  ctx.log.error(`JetStream subject reset (${reset.reason}): the subject continues at change ${reset.next}`, {
    instance, reason: reset.reason, published: String(at.lastChange), next: String(reset.next), ...(at.ancestorEpoch ? { ancestorEpoch: at.ancestorEpoch } : {}),
  });
  return after;
}

/** Publishes the lane's instance until stopped: catch up, then wait for a notice. */
export async function runInstance(ctx: Ctx, state: State, publisher: FencedPublisher, lane: Lane): Promise<void> {
  const { instance } = lane;
  const log = await changeLogOf(ctx, state, instance);
  if (!log) return;
  let describedAt = 0;
  let delay = ctx.args.retryInitialMs;
  let reported = -1n;
  while (!state.stopped && lane.state !== 'refused') {
    try {
      let at = await publisher.position(instance);
      lane.state = 'connected';
      lane.published = at.lastChange;
      for (;;) {
        lane.pending = false;
        const reset = resetNeeded(lane, at, changeTail(log.changes), changeHead(log.changes));
        if (reset) at = await publishReset(ctx, state, publisher, lane, at, reset);
        const messages = publicationMessages(log, at.lastChange, ctx.args.maxMessageBytes, BATCH_MESSAGES);
        for (const message of messages) {
          at = await publisher.publish(instance, at, message, commitTimeOf(lane, message.last));
          lane.published = at.lastChange;
        }
        delay = ctx.args.retryInitialMs;
        const idle = messages.length < BATCH_MESSAGES && !lane.pending;
        if (describedAt === 0 || lane.describeNow || (messages.length > 0 && (idle || Date.now() - describedAt >= DESCRIPTOR_EVERY_MS))) {
          lane.describeNow = false;
          await describe(ctx, state, publisher, lane, at.lastChange);
          describedAt = Date.now();
        }
        if (messages.length > 0 || reported !== at.lastChange) {
          reported = at.lastChange;
          await ctx.send<OutboxInbox>('outbox', { type: 'publication.published', instance, sequence: at.lastChange }).catch(() => undefined);
        }
        if (state.stopped) return;
        if (messages.length === BATCH_MESSAGES || lane.pending) continue;
        await new Promise<void>((resolve) => { lane.wake = resolve; });
        lane.wake = null;
      }
    } catch (error) {
      const reason = reasonOf(error);
      state.metrics.publishErrors.inc({ instance, reason });
      if (error instanceof ForeignPublisherError) {
        lane.state = 'refused';
        ctx.log.error('JetStream publication refused: another store publishes this instance', { instance, subject: error.subject, otherEpoch: error.otherEpoch });
        return;
      }
      if (reason === 'connection' || reason === 'timeout') lane.state = 'unreachable';
      ctx.log.warn('JetStream publish failed; reading the stream again', { instance, ...errorFields(error), retryMs: delay });
      await pause(delay, state);
      delay = Math.min(delay * 2, 30_000);
    }
  }
}
