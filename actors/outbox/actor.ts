/**
 * Lane `outbox`: the one writer of durable consumer records (store/consumers.ts) — creation,
 * deletion, leases and the delivered/acknowledged watermarks. Listeners read records and change
 * bytes straight from LMDB and ask this lane for every change to a record, so two listener
 * workers can never race on one consumer's watermarks. Each ask is one LMDB write transaction,
 * committed before the answer (a watermark the client was told about survives kill -9; an
 * acknowledgement is also flushed to disk before the answer — see consumer-writes.ts).
 *
 * It also trims each change log to its configured window every `[retention] prune_interval_seconds`
 * (store/prune-changes.ts): the lane that knows the leases decides what may go. The processor only
 * appends at the head of its log and the outbox only removes from the tail, so they never write the
 * same keys (LMDB serializes the two write transactions).
 *
 * Accepts OutboxInbox (messages.ts; replies OutboxReplies): asks from listeners `consumer.create`, `consumer.delete`,
 * `consumer.lease`, `consumer.deliver`, `consumer.ack` (client.ts); from `history`: `consumers.move` (a rebuild's
 * promote or rollback, consumer-move.ts). Sends nothing.
 */
import { defineActor, unknownTag } from '../../runtime/actor.js';
import { openStore } from '../../store/store.js';
import { pruneChanges } from '../../store/prune-changes.js';
import { errorFields } from '../../runtime/log.js';
import { acknowledge, createConsumer, deleteConsumer, deliverChanges, renewLease, type OutboxStore } from './consumer-writes.js';
import type { OutboxInbox } from './messages.js';
import { moveConsumers } from './consumer-move.js';
import { listRebuilds } from '../../store/rebuilds.js';
import { createOutboxMetrics, type OutboxMetrics } from './metrics.js';
import { tableBytes } from '../node/store-readings.js';

export interface OutboxArgs {
  readonly dataDir: string;
  /** The chain this node serves (cursors name it). */
  readonly chainId: number;
  /** Each instance's change-log window (`[[processors]] retain_changes`; 0 keeps everything); a rebuild's replacement instances get their processor's. */
  readonly retention: ReadonlyArray<{ readonly processor?: string; readonly instance: string; readonly retainChanges: number }>;
  readonly pruneIntervalMs: number;
  /** `[delivery.jetstream]` on: the published instances, whose unpublished changes retention keeps while the change logs stay within `outboxMaxBytes`. */
  readonly publication?: { readonly instances: readonly string[]; readonly outboxMaxBytes: number };
}

interface State {
  readonly out: OutboxStore;
  readonly writes: OutboxMetrics['consumerCalls'];
  readonly pruneTimer: NodeJS.Timeout;
  /** Last sequence JetStream acknowledged, by instance (unknown until the publisher reports: then nothing of it is pruned). */
  readonly published: Map<string, bigint>;
}

export default defineActor<State, OutboxArgs, OutboxInbox>({
  init(ctx) {
    const store = openStore({ dataDir: ctx.args.dataDir });
    const { consumerCalls: writes, changesPruned: pruned, prunePasses } = createOutboxMetrics(ctx.metrics);
    const published = new Map<string, bigint>();
    const publication = ctx.args.publication;
    /** `of`: the configured instance whose publication covers `instance` (itself, or the one a replacement rebuilds). */
    const unpublishedFrom = (instance: string, of: string): bigint | undefined => {
      if (!publication?.instances.includes(of)) return undefined;
      const bytes = store.processorInstances().reduce((sum, name) => sum + ('getStats' in store.processor(name).changes ? tableBytes(store.processor(name).changes) : 0), 0);
      if (bytes > publication.outboxMaxBytes) {
        ctx.log.warn('change logs over [budgets.outbox]: retention prunes unpublished changes (publication will report a gap)', { instance, bytes, budget: publication.outboxMaxBytes });
        return undefined;
      }
      return (published.get(instance) ?? 0n) + 1n;
    };
    const prune = () => {
      // A cancelled replacement's log no longer grows, and its tables go when the rebuild is deleted.
      const replacements = listRebuilds(store).filter((record) => record.state !== 'cancelled').flatMap((record) => {
        const window = ctx.args.retention.find((r) => r.processor === record.processor);
        // The publisher publishes a replacement on its own subject from its first change (actors/publisher/extra-instances.ts).
        return window ? [{ instance: record.instance, of: window.instance, retainChanges: window.retainChanges }] : [];
      });
      for (const { instance, of, retainChanges } of [...ctx.args.retention.map((r) => ({ ...r, of: r.instance })), ...replacements]) {
        if (retainChanges === 0) continue;
        try {
          const from = unpublishedFrom(instance, of);
          const result = pruneChanges(store, instance, { keepNewest: retainChanges, nowMs: Date.now(), ...(from === undefined ? {} : { unpublishedFrom: from }) });
          if (result.removed > 0) pruned.inc({ instance }, result.removed);
        } catch (error) {
          ctx.log.warn('pruning the change log failed; retrying at the next interval', { instance, ...errorFields(error) });
        }
      }
      prunePasses.inc();
    };
    const pruneTimer = setInterval(prune, ctx.args.pruneIntervalMs);
    ctx.ready();
    return { out: { store, chainId: ctx.args.chainId }, writes, pruneTimer, published };
  },
  handle(message, state) {
    const now = Date.now();
    state.writes.inc({ operation: message.type });
    switch (message.type) {
      case 'publication.published':
        state.published.set(message.instance, message.sequence);
        return undefined;
      case 'consumer.create':
        return createConsumer(state.out, message, now);
      case 'consumer.delete':
        return deleteConsumer(state.out, message);
      case 'consumer.lease':
        return renewLease(state.out, message, now);
      case 'consumer.deliver':
        return deliverChanges(state.out, message, now);
      case 'consumer.ack':
        return acknowledge(state.out, message, now);
      case 'consumers.move':
        return moveConsumers(state.out, message);
      default:
        throw new Error(`outbox does not accept '${unknownTag(message)}'`);
    }
  },
  async stop(state) {
    clearInterval(state.pruneTimer);
    await state.out.store.close();
  },
});
