/**
 * The listener's SSE hub: one change fan-out per processor, the set of open streams, one heartbeat
 * timer for all of them (which also drops streams stalled for two intervals), and their metrics.
 * `notify` is called for every ChangesNotice; `close` ends every stream and drops the timers
 * (listener stop/abort).
 *
 * A heartbeat keeps an idle stream's connection alive and shows the client the server is there; a
 * stream that was handed a change since the last beat needs none, so under a steady change rate the
 * beat writes to nobody (it would otherwise be one more write per stream, as costly as a change).
 */
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { HttpResponse } from 'uWebSockets.js';
import type { ChangeFeed } from '../aggregate/change-feed.js';
import { processorDescriptor, type ConfiguredProcessor } from '../aggregate/configured-processors.js';
import { ChangeFanout } from './change-fanout.js';
import { SseConnection, type ConnectionEnd } from './sse-connection.js';
import { SseChunk, type StreamEncoder } from './sse-encoding.js';
import { HEARTBEAT, resetRequiredFrame, type ResetReason } from './sse-frames.js';

/** How often stalled streams are probed (well inside uWS's ~10 s write timeout, see sse-connection.ts). */
const STALL_PROBE_MS = 1000;

export interface SseSettings {
  readonly heartbeatSeconds: number;
  readonly maxBufferedBytes: number;
  readonly batchChanges: number;
}

export interface SseHubOptions {
  /** The node's store (api/aggregate/change-feed.ts) or a relay's copy of the stream. */
  readonly feed: ChangeFeed;
  readonly processors: readonly ConfiguredProcessor[];
  readonly settings: SseSettings;
  readonly metrics: SseHubMetrics;
}

/** What the hub updates; the listener lane declares it (actors/listener/metrics.ts). */
export interface SseHubMetrics {
  /** One fan-out pass, and the stream-change pairs it handed out. */
  readonly sweepSeconds: Histogram;
  readonly events: Counter;
  readonly commitToWriteSeconds: Histogram;
  readonly noticeDelaySeconds: Histogram;
  readonly streams: Gauge;
  readonly stalledStreams: Gauge;
  /** Labelled by how the stream ended (sse-connection.ts ConnectionEnd). */
  readonly streamsEnded: Counter<'how'>;
}

export class SseHub {
  private readonly fanouts = new Map<string, ChangeFanout>();
  private readonly owners = new Map<SseConnection, ChangeFanout>();
  private readonly heartbeat: NodeJS.Timeout;
  /** Streams whose socket refused a write and has not drained since; probed every second. */
  private readonly stalled = new Set<SseConnection>();
  private readonly stallProbe: NodeJS.Timeout;
  private readonly timing: ConstructorParameters<typeof ChangeFanout>[2];

  constructor(private readonly options: SseHubOptions) {
    const metrics = options.metrics;
    const timing = {
      sweep: (streams: number, seconds: number) => {
        metrics.sweepSeconds.observe(seconds);
        metrics.events.inc(streams);
      },
      written: (seconds: number) => metrics.commitToWriteSeconds.observe(seconds),
    };
    this.timing = timing;
    for (const processor of options.processors) {
      if (processor.delivery) this.fanouts.set(processor.instance, new ChangeFanout(this.sourceFor(processor), options.settings.batchChanges, timing));
    }
    this.heartbeat = setInterval(() => this.beat(), options.settings.heartbeatSeconds * 1000);
    this.stallProbe = setInterval(() => this.probeStalled(), STALL_PROBE_MS);
  }

  /** Wraps an accepted response and starts delivering changes after `position`. */
  attach(processor: ConfiguredProcessor, res: HttpResponse, position: bigint, encoder: StreamEncoder): SseConnection {
    // Fan-outs are per instance: a rebuild's promote makes new streams of a processor follow its replacement.
    let fanout = this.fanouts.get(processor.instance);
    // A rebuild's replacement instance (node), or any processor a relay learns of after start.
    if (!fanout && processor.delivery) {
      fanout = new ChangeFanout(this.sourceFor(processor), this.options.settings.batchChanges, this.timing);
      this.fanouts.set(processor.instance, fanout);
    }
    if (!fanout) throw new Error(`processor '${processor.id}' has no change stream`);
    const connection = new SseConnection(res, position, this.options.settings.maxBufferedBytes, {
      stalled: (stalled) => {
        this.stalled.add(stalled);
        this.options.metrics.stalledStreams.set(this.stalled.size);
      },
      drained: (drained) => {
        this.stalled.delete(drained);
        this.options.metrics.stalledStreams.set(this.stalled.size);
        fanout.wake();
      },
      gone: (gone, how) => this.detach(gone, how),
    }, encoder);
    this.owners.set(connection, fanout);
    this.options.metrics.streams.inc();
    fanout.join(connection);
    return connection;
  }

  /**
   * A processor's change log grew to `sequence` (ChangesNotice), committed at `committedAt` (ms since
   * the epoch; absent from older senders); unknown ids are ignored and reported false.
   */
  notify(processorId: string, sequence?: number, committedAt?: number): boolean {
    // A configured processor's lane names its id; a rebuild's replacement lane names its instance.
    const configured = this.options.processors.find((p) => p.id === processorId);
    const fanout = this.fanouts.get(configured?.instance ?? processorId);
    if (!fanout) return configured === undefined;
    if (sequence !== undefined && committedAt !== undefined) {
      this.options.metrics.noticeDelaySeconds.observe(Math.max(0, performance.timeOrigin + performance.now() - committedAt) / 1000);
      fanout.committed(BigInt(sequence), committedAt);
    }
    fanout.wake();
    return true;
  }

  /** Ends every stream and stops the heartbeat. */
  close(): void {
    clearInterval(this.heartbeat);
    clearInterval(this.stallProbe);
    for (const fanout of this.fanouts.values()) fanout.close();
    for (const connection of [...this.owners.keys()]) connection.end();
  }

  /** Ends every stream following `instance` with `frame` (a relay's copy changed store epoch: positions there name nothing). */
  endStreams(instance: string, frame: SseChunk): number {
    const fanout = this.fanouts.get(instance);
    let ended = 0;
    for (const [connection, owner] of [...this.owners]) {
      if (owner !== fanout) continue;
      connection.end(frame);
      ended += 1;
    }
    return ended;
  }

  /** The terminal reset frame for `processor` now (head and coverage read at call time). */
  resetFrame(processor: ConfiguredProcessor, reason: ResetReason): SseChunk {
    const { feed } = this.options;
    return new SseChunk(resetRequiredFrame({ chainId: feed.chainId, processor: processorDescriptor(processor), head: feed.bounds(processor).head, coverage: feed.coverage(processor), reason }));
  }

  private sourceFor(processor: ConfiguredProcessor) {
    const feed = this.options.feed;
    return {
      read: (after: bigint, limit: number) => {
        feed.refresh();
        return feed.read(processor, after, limit);
      },
      expire: (connections: readonly SseConnection[], position: bigint) => {
        const frame = this.resetFrame(processor, {
          code: 'cursor_expired',
          message: `changes after ${position} are no longer retained; take a snapshot and resubscribe`,
          details: { action: 'snapshot and resubscribe' },
        });
        for (const connection of connections) connection.end(frame);
      },
    };
  }

  private detach(connection: SseConnection, how: ConnectionEnd): void {
    const fanout = this.owners.get(connection);
    if (!fanout) return;
    this.owners.delete(connection);
    this.stalled.delete(connection);
    this.options.metrics.stalledStreams.set(this.stalled.size);
    fanout.leave(connection);
    this.options.metrics.streams.dec();
    this.options.metrics.streamsEnded.inc({ how });
  }

  /** A heartbeat to every stream not handed a change since the last beat. */
  private beat(): void {
    for (const connection of this.owners.keys()) {
      if (!connection.writable) continue;
      if (connection.position !== connection.positionAtBeat) connection.positionAtBeat = connection.position;
      else connection.send(HEARTBEAT);
    }
  }

  /** A stream stalled for more than two heartbeat intervals is a slow consumer (docs/http-api.md, "SSE slow consumers"). */
  private probeStalled(): void {
    if (this.stalled.size === 0) return;
    const now = Date.now();
    const limitMs = 2 * this.options.settings.heartbeatSeconds * 1000;
    for (const connection of [...this.stalled]) connection.probe(now, limitMs);
  }
}
