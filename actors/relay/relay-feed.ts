/**
 * The relay's change feed (api/aggregate/change-feed.ts) and processor registry, from JetStream alone: the node's
 * descriptor bucket names each processor id's instance, subject, epoch, chain and coverage
 * (net/jetstream/descriptor-watch.ts), and one SubjectCopy per subject holds its changes (net/jetstream/subject-copy.ts).
 * A processor is known once its descriptor is; its subject is copied from then on.
 */
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { ChangeFeed } from '../../api/aggregate/change-feed.js';
import type { ConfiguredProcessor } from '../../api/aggregate/configured-processors.js';
import { HttpError } from '../../api/errors.js';
import type { Logger } from '../../runtime/log.js';
import { errorFields } from '../../runtime/log.js';
import type { PublishedDescriptor } from '../../net/jetstream/descriptors.js';
import { ChangeCache, SubjectCopy } from '../../net/jetstream/subject-copy.js';

export interface RelayFeedOptions {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly stream: string;
  readonly cacheBytes: number;
  readonly log: Logger;
  /** New changes (or changes fetched again) for `instance`: streams following it may go on. */
  readonly wake: (instance: string, last?: bigint, committedAt?: number | null, live?: boolean) => void;
  /** The copy of `instance` started a new run (reset marker, epoch change or gap). */
  readonly reset: (instance: string, reason: string) => void;
}

const RETRY_MS = 2000;
/** How often each copy probes the stream: for messages its limits removed, and for a consumer that stopped delivering. */
const WATCH_MS = 3000;

/** A processor as the relay serves it: the descriptor's identity (no kind code runs here). */
function processorOf(descriptor: PublishedDescriptor): ConfiguredProcessor {
  const p = descriptor.processor;
  return {
    id: p.id, kind: p.kind, instance: p.instance, output: p.output, delivery: p.delivery, startBlock: null,
    info: {
      kind: p.kind, version: p.version, changeSchema: p.changeSchema, genericApi: p.genericApi, deliveryOrdering: p.deliveryOrdering,
      ordering: 'block_local', queryExtensions: [], schema: null,
    },
  };
}

export class RelayFeed implements ChangeFeed {
  private readonly descriptors = new Map<string, PublishedDescriptor>();
  private readonly processors = new Map<string, ConfiguredProcessor>();
  /** By instance. */
  private readonly copies = new Map<string, SubjectCopy>();
  readonly cache: ChangeCache;
  private trimming: NodeJS.Timeout | null = null;
  /** Instances whose copy failed to start, waiting to be tried again. */
  private readonly retrying = new Set<string>();
  private stopped = false;

  constructor(private readonly options: RelayFeedOptions) {
    this.cache = new ChangeCache(options.cacheBytes);
  }

  get chainId(): number {
    for (const descriptor of this.descriptors.values()) return descriptor.chainId;
    return 0;
  }

  /** A descriptor arrived or changed: the processor is served, and its subject copied. */
  describe(descriptor: PublishedDescriptor): void {
    this.descriptors.set(descriptor.processor.id, descriptor);
    this.processors.set(descriptor.processor.id, processorOf(descriptor));
    const instance = descriptor.processor.instance;
    if (this.copies.has(instance) || this.retrying.has(instance)) return;
    const copy = new SubjectCopy(descriptor.subject, this.options.stream, this.options.js, this.options.jsm, this.cache, {
      appended: (last, committedAt, live) => this.options.wake(instance, last, committedAt, live),
      loaded: () => this.options.wake(instance),
      reset: (reason) => this.options.reset(instance, reason),
      stalled: (at, last) => this.options.log.warn('the copy of a subject stopped receiving; reading on with a new consumer', { subject: descriptor.subject, at, last }),
    });
    this.copies.set(instance, copy);
    copy.start().catch((error: unknown) => {
      this.options.log.error('cannot copy a subject of the JetStream stream; trying again', { subject: descriptor.subject, retryMs: RETRY_MS, ...errorFields(error) });
      this.copies.delete(instance);
      this.retrying.add(instance);
      setTimeout(() => {
        this.retrying.delete(instance);
        const latest = this.descriptors.get(descriptor.processor.id);
        if (latest && !this.stopped) this.describe(latest);
      }, RETRY_MS).unref();
    });
    this.trimming ??= setInterval(() => {
      for (const c of this.copies.values()) {
        void c.trim();
        void c.watch();
      }
    }, WATCH_MS);
  }

  /** Every processor id with a descriptor, and whether its copy has caught up with its subject. */
  state(): Array<{ id: string; instance: string; subject: string; caughtUp: boolean; head: bigint }> {
    return [...this.descriptors.values()].map((d) => {
      const copy = this.copies.get(d.processor.instance);
      return { id: d.processor.id, instance: d.processor.instance, subject: d.subject, caughtUp: copy?.caughtUp ?? false, head: copy?.bounds().head ?? 0n };
    });
  }

  /** The registry the delivery routes look processors up in: 404 `not_found` for an id no descriptor names. */
  readonly registry = {
    byId: (id: string): ConfiguredProcessor => {
      const processor = this.processors.get(id);
      if (!processor) throw new HttpError('not_found', `no processor '${id}' is published to this relay's JetStream stream`, { processor: id });
      if (!this.copies.get(processor.instance)?.caughtUp) {
        throw new HttpError('not_ready', `this relay is still reading processor '${id}' from the JetStream stream; retry shortly`, { processor: id });
      }
      return processor;
    },
  };

  /** The last change sequence copied of `instance` (0 before any). */
  copiedHead(instance: string): bigint {
    return this.copies.get(instance)?.bounds().head ?? 0n;
  }

  private copyOf(processor: ConfiguredProcessor): SubjectCopy | undefined {
    return this.copies.get(processor.instance);
  }

  private descriptorOf(processor: ConfiguredProcessor): PublishedDescriptor {
    return this.descriptors.get(processor.id)!;
  }

  owner(processor: ConfiguredProcessor) {
    const epoch = this.copyOf(processor)?.epoch ?? this.descriptorOf(processor).storeEpoch;
    return { epoch: BigInt(`0x${epoch}`), chainId: this.descriptorOf(processor).chainId, instance: processor.instance };
  }

  bounds(processor: ConfiguredProcessor) {
    return this.copyOf(processor)?.bounds() ?? { head: 0n, tail: null };
  }

  read(processor: ConfiguredProcessor, after: bigint, limit: number) {
    return this.copyOf(processor)?.read(after, limit) ?? [];
  }

  coverage(processor: ConfiguredProcessor) {
    return this.descriptorOf(processor).coverage;
  }

  refresh(): void {}

  prepare(processor: ConfiguredProcessor, after: bigint, limit: number): Promise<void> | undefined {
    return this.copyOf(processor)?.prepare(after, limit);
  }

  /** Resolves once every described subject's copy has caught up. */
  async caughtUp(): Promise<void> {
    await Promise.all([...this.copies.values()].map((copy) => copy.whenCaughtUp()));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.trimming) clearInterval(this.trimming);
    await Promise.all([...this.copies.values()].map((copy) => copy.stop().catch(() => undefined)));
  }
}
