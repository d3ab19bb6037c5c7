/**
 * Lane `publisher` (issue 30, docs/jetstream.md; only with `[delivery.jetstream] enabled`): publishes the change log
 * of every instance with delivery on to JetStream, in sequence order, fenced (net/jetstream/fenced-publisher.ts).
 * The change log is the outbox: commits never wait for this lane. At start, and after any publish error, each
 * instance reads its subject's last message and continues with the next change; a subject another store publishes
 * is refused (logged once as an error) and left alone.
 *
 * Accepts PublisherInbox (messages.ts): `changes` ChangesNotice {processor, sequence} wakes that instance's loop.
 * Sends: `publication.published` {instance, sequence} to `outbox` after each acknowledged batch (retention keeps the rest).
 */
import { defineActor, type ActorContext } from '../../runtime/actor.js';
import { errorFields } from '../../runtime/log.js';
import { openStore, type Store } from '../../store/store.js';
import { publicationMessages } from '../../store/publication-messages.js';
import { FencedPublisher, ForeignPublisherError, type PublisherOptions } from '../../net/jetstream/fenced-publisher.js';
import { changeHead, changeTail } from '../../store/change-log.js';
import { JetStreamApiError } from '@nats-io/jetstream';
import type { PublisherInbox } from './messages.js';
import type { OutboxInbox } from '../outbox/messages.js';
import { createPublisherMetrics, type PublisherMetrics } from './metrics.js';
import { processorDescriptor, type ConfiguredProcessor } from '../../api/aggregate/configured-processors.js';
import { processorTables, readCoverage } from '../../api/aggregate/processor-reader.js';
import { DescriptorBucket } from '../../net/jetstream/descriptors.js';

export interface PublisherArgs {
  readonly dataDir: string;
  readonly chainId: number;
  /** Processor id → the instance whose log it publishes (delivery on only), and the processor as the API serves it (descriptor, coverage). */
  readonly instances: ReadonlyArray<{ readonly processor: string; readonly instance: string; readonly configured: ConfiguredProcessor }>;
  /** The key-value bucket of descriptors relays read (docs/jetstream.md "Descriptors"). */
  readonly descriptorBucket: string;
  readonly publisher: Omit<PublisherOptions, 'storeEpoch'>;
  readonly maxMessageBytes: number;
  readonly retryInitialMs: number;
}

interface Lane {
  readonly instance: string;
  wake: (() => void) | null;
  pending: boolean;
  refused: boolean;
  /** Last change sequence JetStream acknowledged (known once the subject was read). */
  published: bigint;
  /** Commit times of notified sequences not yet published, oldest first (for the lag in seconds). */
  readonly commits: Array<{ readonly sequence: number; readonly at: number }>;
}

interface State {
  readonly store: Store;
  /** Ends the current retry pause at once (stop). */
  readonly pauses: Set<() => void>;
  readonly lanes: Map<string, Lane>;
  stopped: boolean;
  publisher: FencedPublisher | null;
  descriptors: DescriptorBucket | null;
  running: Promise<unknown> | null;
  readonly metrics: PublisherMetrics;
  timer: NodeJS.Timeout | null;
}

type Ctx = ActorContext<PublisherArgs>;

/** Messages published between checks of `stopped` and of new notices. */
const BATCH_MESSAGES = 64;
/** While an instance catches up, its descriptor is put at most this often (and always once it has caught up). */
const DESCRIPTOR_EVERY_MS = 250;

const pause = (ms: number, state: State) => new Promise<void>((resolve) => {
  if (state.stopped) return resolve();
  const end = () => { clearTimeout(timer); state.pauses.delete(end); resolve(); };
  const timer = setTimeout(end, ms);
  state.pauses.add(end);
});

async function connectLoop(ctx: Ctx, state: State): Promise<FencedPublisher | null> {
  for (let delay = ctx.args.retryInitialMs; !state.stopped; delay = Math.min(delay * 2, 30_000)) {
    try {
      return await FencedPublisher.open({ ...ctx.args.publisher, storeEpoch: state.store.epoch.toString(16) });
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

/** Why a publish or connection failed, for the error counter. */
function reasonOf(error: unknown): string {
  if (error instanceof ForeignPublisherError) return 'foreign_publisher';
  if (error instanceof JetStreamApiError) return error.code === 10071 ? 'fence' : 'other';
  const text = `${(error as Error)?.name ?? ''} ${(error as Error)?.message ?? ''}`.toLowerCase();
  if (text.includes('timeout')) return 'timeout';
  if (/connection|connect|closed|disconnect|econnrefused|no responders/.test(text)) return 'connection';
  return 'other';
}

/** When the change `sequence` was committed, as this process was notified (null: before it started, or not told). */
function commitTimeOf(lane: Lane, sequence: bigint): number | null {
  for (const commit of lane.commits) if (BigInt(commit.sequence) >= sequence) return commit.at;
  return null;
}

/** Refreshes the lag gauges of every instance from its log head and the commits still waiting. */
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
    state.metrics.lagChanges.set({ instance: lane.instance }, Number(lag));
    state.metrics.lagSeconds.set({ instance: lane.instance }, lag === 0n || lane.commits.length === 0 ? 0 : Math.max(0, (now - lane.commits[0]!.at) / 1000));
    state.metrics.publishedSequence.set({ instance: lane.instance }, Number(lane.published));
  }
}

/** Puts the instance's descriptor: what relays answer hello frames, the change head and page coverage from. */
async function putDescriptor(ctx: Ctx, state: State, configured: ConfiguredProcessor, published: bigint): Promise<void> {
  if (!state.descriptors || !state.publisher) return;
  state.store.env.resetReadTxn();
  await state.descriptors.put({
    format: 1, chainId: ctx.args.chainId, storeEpoch: state.store.epoch.toString(16), subject: state.publisher.subject(configured.instance),
    processor: processorDescriptor(configured), coverage: readCoverage(state.store, ctx.args.chainId, configured), published: published.toString(), updatedAt: new Date().toISOString(),
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

/** Publishes `instance` until stopped: catch up, then wait for a notice. */
async function run(ctx: Ctx, state: State, publisher: FencedPublisher, configured: ConfiguredProcessor, lane: Lane): Promise<void> {
  const instance = configured.instance;
  let describedAt = 0;
  const log = await changeLogOf(ctx, state, instance);
  if (!log) return;
  let delay = ctx.args.retryInitialMs;
  let reported = -1n;
  while (!state.stopped && !lane.refused) {
    try {
      let at = await publisher.position(instance);
      lane.published = at.lastChange;
      for (;;) {
        lane.pending = false;
        const tail = changeTail(log.changes);
        if (tail !== null && tail > at.lastChange + 1n) {
          // Retention pruned changes never published (the outbox budget was passed). Not yet published as reset_required: logged and counted.
          state.metrics.publishErrors.inc({ instance, reason: 'retention_gap' });
          ctx.log.error('JetStream publication gap: retention pruned unpublished changes (retention_gap)', { instance, published: String(at.lastChange), tail: String(tail) });
        }
        const messages = publicationMessages(log, at.lastChange, ctx.args.maxMessageBytes, BATCH_MESSAGES);
        for (const message of messages) {
          at = await publisher.publish(instance, at, message, commitTimeOf(lane, message.last));
          lane.published = at.lastChange;
        }
        delay = ctx.args.retryInitialMs;
        const idle = messages.length < BATCH_MESSAGES && !lane.pending;
        if (describedAt === 0 || (messages.length > 0 && (idle || Date.now() - describedAt >= DESCRIPTOR_EVERY_MS))) {
          await putDescriptor(ctx, state, configured, at.lastChange);
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
      state.metrics.publishErrors.inc({ instance, reason: reasonOf(error) });
      if (error instanceof ForeignPublisherError) {
        lane.refused = true;
        ctx.log.error('JetStream publication refused: another store publishes this instance', { instance, subject: error.subject, otherEpoch: error.otherEpoch });
        return;
      }
      ctx.log.warn('JetStream publish failed; reading the stream again', { instance, ...errorFields(error), retryMs: delay });
      await pause(delay, state);
      delay = Math.min(delay * 2, 30_000);
    }
  }
}

export default defineActor<State, PublisherArgs, PublisherInbox>({
  init(ctx) {
    const store = openStore({ dataDir: ctx.args.dataDir, readOnly: true });
    const state: State = { store, pauses: new Set(), lanes: new Map(ctx.args.instances.map((i) => [i.processor, { instance: i.instance, wake: null, pending: true, refused: false, published: 0n, commits: [] }])),
      stopped: false, publisher: null, descriptors: null, running: null, metrics: createPublisherMetrics(ctx.metrics), timer: null,
    };
    state.timer = setInterval(() => measure(state), 1000);
    state.running = connectLoop(ctx, state).then(async (publisher) => {
      state.publisher = publisher;
      if (!publisher) return undefined;
      state.descriptors = await describeLoop(ctx, state, publisher);
      return Promise.all(ctx.args.instances.map(({ processor, configured }) => run(ctx, state, publisher, configured, state.lanes.get(processor)!)));
    });
    ctx.ready();
    return state;
  },
  handle(message, state) {
    const lane = state.lanes.get(message.processor);
    if (!lane) return;
    lane.pending = true;
    if (lane.commits.length < 100_000) lane.commits.push({ sequence: message.sequence, at: message.committedAt });
    lane.wake?.();
  },
  async stop(state) {
    state.stopped = true;
    if (state.timer) clearInterval(state.timer);
    for (const lane of state.lanes.values()) lane.wake?.();
    for (const end of [...state.pauses]) end();
    await state.publisher?.close().catch(() => undefined);
    await state.running?.catch(() => undefined);
    await state.store.close();
  },
});
