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
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { HttpResponse } from 'uWebSockets.js';
import { readChanges } from '../../store/change-log.js';
import type { Store } from '../../store/store.js';
import { processorDescriptor, type ConfiguredProcessor } from '../aggregate/configured-processors.js';
import { changeBounds, processorTables, readCoverage } from '../aggregate/processor-reader.js';
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
  readonly store: Store;
  readonly chainId: number;
  readonly processors: readonly ConfiguredProcessor[];
  readonly settings: SseSettings;
  readonly metrics: Registry;
}

export class SseHub {
  private readonly fanouts = new Map<string, ChangeFanout>();
  private readonly owners = new Map<SseConnection, ChangeFanout>();
  private readonly heartbeat: NodeJS.Timeout;
  /** Streams whose socket refused a write and has not drained since; probed every second. */
  private readonly stalled = new Set<SseConnection>();
  private readonly stallProbe: NodeJS.Timeout;
  private readonly open: Gauge;
  private readonly stalledStreams: Gauge;
  private readonly ended: Counter;
  private readonly sweeps: Histogram;
  private readonly noticeDelay: Histogram;
  private readonly timing: ConstructorParameters<typeof ChangeFanout>[2];

  constructor(private readonly options: SseHubOptions) {
    const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5];
    this.sweeps = new Histogram({
      name: 'chain_node_sse_sweep_seconds', help: 'One fan-out pass: reading the new changes and writing them to every stream that can take them',
      buckets, registers: [options.metrics],
    });
    const delivered = new Counter({ name: 'chain_node_sse_events_total', help: 'Stream-change pairs handed to SSE streams (a batch of changes written at once counts once)', registers: [options.metrics] });
    const commitToWrite = new Histogram({
      name: 'chain_node_sse_commit_to_write_seconds',
      help: "From a change's commit completing to an SSE stream being handed its frame (every 16th stream of a fan-out pass and the last one, for changes committed while this listener was notified)",
      buckets, registers: [options.metrics],
    });
    this.noticeDelay = new Histogram({
      name: 'chain_node_sse_notice_delay_seconds', help: "From a processor's commit completing to this listener handling its change notice",
      buckets, registers: [options.metrics],
    });
    const timing = {
      sweep: (streams: number, seconds: number) => {
        this.sweeps.observe(seconds);
        delivered.inc(streams);
      },
      written: (seconds: number) => commitToWrite.observe(seconds),
    };
    this.timing = timing;
    for (const processor of options.processors) {
      if (processor.delivery) this.fanouts.set(processor.instance, new ChangeFanout(this.sourceFor(processor), options.settings.batchChanges, timing));
    }
    this.heartbeat = setInterval(() => this.beat(), options.settings.heartbeatSeconds * 1000);
    this.stallProbe = setInterval(() => this.probeStalled(), STALL_PROBE_MS);
    this.open = new Gauge({ name: 'chain_node_sse_streams', help: 'Open SSE change streams', registers: [options.metrics] });
    this.stalledStreams = new Gauge({ name: 'chain_node_sse_streams_stalled', help: 'Open SSE streams whose client is not taking what was written (closed as slow consumers after two heartbeat intervals)', registers: [options.metrics] });
    this.ended = new Counter({ name: 'chain_node_sse_streams_ended_total', help: 'SSE change streams ended, by how', labelNames: ['how'], registers: [options.metrics] });
  }

  /** Wraps an accepted response and starts delivering changes after `position`. */
  attach(processor: ConfiguredProcessor, res: HttpResponse, position: bigint, encoder: StreamEncoder): SseConnection {
    // Fan-outs are per instance: a rebuild's promote makes new streams of a processor follow its replacement.
    let fanout = this.fanouts.get(processor.instance);
    if (!fanout && processor.delivery && processor.laneId !== undefined) {
      fanout = new ChangeFanout(this.sourceFor(processor), this.options.settings.batchChanges, this.timing);
      this.fanouts.set(processor.instance, fanout);
    }
    if (!fanout) throw new Error(`processor '${processor.id}' has no change stream`);
    const connection = new SseConnection(res, position, this.options.settings.maxBufferedBytes, {
      stalled: (stalled) => {
        this.stalled.add(stalled);
        this.stalledStreams.set(this.stalled.size);
      },
      drained: (drained) => {
        this.stalled.delete(drained);
        this.stalledStreams.set(this.stalled.size);
        fanout.wake();
      },
      gone: (gone, how) => this.detach(gone, how),
    }, encoder);
    this.owners.set(connection, fanout);
    this.open.inc();
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
      this.noticeDelay.observe(Math.max(0, performance.timeOrigin + performance.now() - committedAt) / 1000);
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

  /** The terminal reset frame for `processor` now (head and coverage read at call time). */
  resetFrame(processor: ConfiguredProcessor, reason: ResetReason): SseChunk {
    const { store, chainId } = this.options;
    const head = changeBounds(processor, processorTables(store, processor.instance)).head;
    return new SseChunk(resetRequiredFrame({ chainId, processor: processorDescriptor(processor), head, coverage: readCoverage(store, chainId, processor), reason }));
  }

  private sourceFor(processor: ConfiguredProcessor) {
    const store = this.options.store;
    return {
      read: (after: bigint, limit: number) => {
        store.env.resetReadTxn();
        const tables = processorTables(store, processor.instance);
        return tables ? readChanges({ changes: tables.changes, epoch: store.epoch, chainId: this.options.chainId, instance: processor.instance }, after, limit) : [];
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
    this.stalledStreams.set(this.stalled.size);
    fanout.leave(connection);
    this.open.dec();
    this.ended.inc({ how });
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
