/**
 * Lane `publisher` (issue 30, docs/jetstream.md; only with `[delivery.jetstream] enabled`): publishes the change log
 * of every instance with delivery on to JetStream, in sequence order, fenced (net/jetstream/fenced-publisher.ts), one
 * loop per instance (instance-loop.ts) — rebuild replacements and backfill-subscription streams included, found in the
 * store every second (extra-instances.ts) — and keeps each processor's descriptor in the descriptor KV bucket
 * (net/jetstream/descriptors.ts). The change
 * log is the outbox: commits never wait for this lane. A subject another store publishes is refused and left alone.
 *
 * Accepts PublisherInbox (messages.ts): `changes` ChangesNotice {processor, sequence, committedAt} wakes that instance's loop.
 * Sends: `publication.published` {instance, sequence} to `outbox` after each acknowledged batch (retention keeps the rest);
 * `publication` PublicationNotice to every listener about every second (`/v1/status`, `/debug/network`).
 */
import { defineActor } from '../../runtime/actor.js';
import { errorFields } from '../../runtime/log.js';
import { openStore } from '../../store/store.js';
import { readAncestorEpochs } from '../../store/meta.js';
import { changeHead } from '../../store/change-log.js';
import { FencedPublisher } from '../../net/jetstream/fenced-publisher.js';
import { DescriptorBucket } from '../../net/jetstream/descriptors.js';
import type { PublicationOfInstance, PublicationOfProcessor } from '../../api/aggregate/publication-status.js';
import type { ListenerInbox } from '../listener/messages.js';
import type { PublisherInbox } from './messages.js';
import { createPublisherMetrics, zeroSeries } from './metrics.js';
import { runInstance } from './instance-loop.js';
import { pause, type Ctx, type Lane, type PublisherArgs, type State } from './state.js';
import { extraInstances, servedInstance } from './extra-instances.js';

export type { PublisherArgs } from './state.js';

/** Notified commits kept per instance for the lag and `Chain-Node-Committed-At`; past it, older commit times are forgotten. */
const MAX_COMMITS = 100_000;

async function connectLoop(ctx: Ctx, state: State): Promise<FencedPublisher | null> {
  for (let delay = ctx.args.retryInitialMs; !state.stopped; delay = Math.min(delay * 2, 30_000)) {
    try {
      return await FencedPublisher.open({ ...ctx.args.publisher, storeEpoch: state.store.epoch.toString(16), ancestorEpochs: readAncestorEpochs(state.store.meta) });
    } catch (error) {
      ctx.log.warn('JetStream unreachable; changes wait in the change log', { ...errorFields(error), retryMs: delay });
      for (const lane of state.lanes.values()) state.metrics.publishErrors.inc({ instance: lane.instance, reason: 'connection' });
      await pause(delay, state);
    }
  }
  return null;
}

/** Opens (creates when missing) the descriptor bucket, retrying like the connection. */
async function describeLoop(ctx: Ctx, state: State, publisher: FencedPublisher): Promise<DescriptorBucket | null> {
  for (let delay = ctx.args.retryInitialMs; !state.stopped; delay = Math.min(delay * 2, 30_000)) {
    try {
      return await DescriptorBucket.open(publisher.client, ctx.args.descriptorBucket, ctx.args.publisher.replicas);
    } catch (error) {
      ctx.log.warn('cannot open the JetStream descriptor bucket; relays cannot serve until it opens', { bucket: ctx.args.descriptorBucket, ...errorFields(error), retryMs: delay });
      await pause(delay, state);
    }
  }
  return null;
}

/** Refreshes the lag of every instance from its log head and the commits still waiting. */
function measure(state: State): void {
  const now = Date.now();
  for (const lane of state.lanes.values()) {
    while (lane.commits.length > 0 && lane.commits[0]!.sequence <= lane.published) lane.commits.shift();
    let head = 0n;
    try {
      head = changeHead(state.store.processor(lane.instance).changes);
    } catch {
      continue;
    }
    const lag = head > lane.published ? head - lane.published : 0n;
    lane.lagChanges = Number(lag);
    lane.lagSeconds = lag === 0n || lane.commits.length === 0 ? 0 : Math.max(0, (now - lane.commits[0]!.at) / 1000);
    state.metrics.lagChanges.set({ instance: lane.instance }, lane.lagChanges);
    state.metrics.lagSeconds.set({ instance: lane.instance }, lane.lagSeconds);
    state.metrics.publishedSequence.set({ instance: lane.instance }, Number(lane.published));
  }
}

/** Tells every listener where publication stands: by processor id, its configured instance's and its other change logs'. */
function report(ctx: Ctx, state: State): void {
  const processors: Record<string, PublicationOfProcessor> = {};
  const others = new Map<string, PublicationOfInstance[]>();
  for (const [id, lane] of state.lanes) {
    const common = {
      instance: lane.instance, subject: `${ctx.args.publisher.subjectPrefix}.${lane.instance}`, publishedSequence: String(lane.published),
      lagChanges: lane.lagChanges, lagSeconds: lane.lagSeconds,
      // An idle lane learns of a lost connection only at its next publish: the client's own status says it at once.
      state: lane.state === 'connected' && !state.publisher?.connected ? 'unreachable' as const : lane.state,
    };
    if (lane.kind === 'configured') processors[id] = { ...common, resets: { ...lane.resets } };
    else others.set(lane.processor.id, [...(others.get(lane.processor.id) ?? []), { ...common, kind: lane.kind }]);
  }
  for (const [id, list] of others) {
    const own = processors[id];
    if (own) processors[id] = { ...own, others: list };
  }
  const notice: ListenerInbox = { type: 'publication', stream: ctx.args.publisher.stream, servers: state.publisher?.connected ? state.publisher.servers() : [], reportedAt: new Date().toISOString(), processors };
  for (const listener of ctx.args.listeners) ctx.send<ListenerInbox>(listener, notice).catch(() => undefined);
}

function newLane(state: State, processor: PublisherArgs['processors'][number], kind: Lane['kind'] = 'configured'): Lane {
  let head = 0n;
  try {
    head = changeHead(state.store.processor(processor.instance).changes);
  } catch {
    // The processor lane has not created its tables yet: every change will be notified.
  }
  return {
    processor, instance: processor.instance, kind, describeNow: false, wake: null, pending: true, state: 'unreachable', published: 0n, unnotifiedThrough: Number(head),
    commits: [], resets: { epoch_changed: 0, retention_gap: 0 }, lagChanges: 0, lagSeconds: 0,
  };
}

/**
 * Every second: lanes for the replacement instances and subscription streams the store holds now (extra-instances.ts),
 * started at once when connected; each extra lane is woken (a subscription stream's writer sends no notice); and a
 * processor whose serving instance changed (promote, rollback) gets its descriptor from the new one.
 */
function discover(ctx: Ctx, state: State): void {
  state.store.env.resetReadTxn();
  for (const extra of extraInstances(state.store)) {
    const lane = state.lanes.get(extra.instance);
    if (lane) {
      lane.pending = true;
      lane.wake?.();
      continue;
    }
    const base = ctx.args.processors.find((p) => p.id === extra.processor);
    if (!base || (extra.kind === 'replacement' && !base.delivery)) continue;
    const added = newLane(state, { ...base, instance: extra.instance, laneId: extra.instance }, extra.kind);
    state.lanes.set(extra.instance, added);
    zeroSeries(state.metrics, extra.instance);
    if (state.publisher) start(ctx, state, state.publisher, added);
  }
  for (const processor of ctx.args.processors) {
    if (!processor.delivery) continue;
    const serving = servedInstance(state.store, processor.id, processor.instance);
    if (state.serving.get(processor.id) === serving) continue;
    state.serving.set(processor.id, serving);
    const lane = [...state.lanes.values()].find((l) => l.kind !== 'subscription' && l.processor.id === processor.id && l.instance === serving);
    if (!lane) continue;
    lane.describeNow = true;
    lane.wake?.();
  }
}

function start(ctx: Ctx, state: State, publisher: FencedPublisher, lane: Lane): void {
  const loop = runInstance(ctx, state, publisher, lane).catch((error: unknown) => ctx.log.error('publication of an instance ended', { instance: lane.instance, ...errorFields(error) }));
  state.loops.add(loop);
  void loop.finally(() => state.loops.delete(loop));
}

export default defineActor<State, PublisherArgs, PublisherInbox>({
  init(ctx) {
    const store = openStore({ dataDir: ctx.args.dataDir, readOnly: true });
    const state: State = { store, pauses: new Set(), lanes: new Map(), serving: new Map(), loops: new Set(), stopped: false, publisher: null, descriptors: null, running: null, metrics: createPublisherMetrics(ctx.metrics), timer: null };
    for (const processor of ctx.args.processors) {
      if (!processor.delivery) continue;
      state.lanes.set(processor.id, newLane(state, processor));
      zeroSeries(state.metrics, processor.instance);
    }
    state.timer = setInterval(() => { measure(state); report(ctx, state); discover(ctx, state); }, 1000);
    state.running = connectLoop(ctx, state).then(async (publisher) => {
      state.publisher = publisher;
      if (!publisher) return undefined;
      state.descriptors = await describeLoop(ctx, state, publisher);
      for (const lane of state.lanes.values()) start(ctx, state, publisher, lane);
      return undefined;
    });
    ctx.ready();
    return state;
  },
  handle(message, state) {
    const lane = state.lanes.get(message.processor);
    if (!lane) return;
    lane.pending = true;
    if (lane.commits.length < MAX_COMMITS) lane.commits.push({ sequence: message.sequence, at: message.committedAt });
    else lane.unnotifiedThrough = message.sequence;
    lane.wake?.();
  },
  async stop(state) {
    state.stopped = true;
    if (state.timer) clearInterval(state.timer);
    for (const lane of state.lanes.values()) lane.wake?.();
    for (const end of [...state.pauses]) end();
    await state.publisher?.close().catch(() => undefined);
    await state.running?.catch(() => undefined);
    await Promise.all([...state.loops]);
    await state.store.close();
  },
});
