/**
 * One SSE response with a bounded send buffer. uWS `write` returning false means the socket has
 * backpressure (uWS keeps that chunk): later chunks wait in a JS queue (shared Buffers, so a
 * fan-out costs no copies) until `onWritable` drains it. A connection whose queue would pass
 * `maxBufferedBytes`, or that stays stalled for too long, is a slow consumer and is closed
 * (spec §4.8 rule 5: durable resume comes from the change log).
 *
 * "Too long" is the node's rule (the hub's stall limit), not uWS's: uWS closes a response that has
 * made no write progress for ~10 s, before any limit of ours could act. So a stalled response is
 * paused (which disarms uWS's timer and its polling) and the hub probes it about once a second:
 * resumed for one turn of the event loop, in which a socket that drained fires `onWritable`, and
 * paused again if it is still stalled.
 *
 * Every chunk passes through the response's encoder (sse-encoding.ts) on its way in, in stream order:
 * identity hands back the chunk's own bytes, gzip its shared deflate segment; the queue holds what
 * goes on the wire.
 */
import type { HttpResponse } from 'uWebSockets.js';
import type { SseChunk, StreamEncoder } from './sse-encoding.js';

export type ConnectionEnd = 'ended' | 'slow_consumer' | 'aborted';

export interface ConnectionEvents {
  /** The socket refused a write: the connection waits for the hub's probes (`probe`). */
  readonly stalled: (connection: SseConnection) => void;
  /** The socket took everything queued: the connection can take more. */
  readonly drained: (connection: SseConnection) => void;
  readonly gone: (connection: SseConnection, how: ConnectionEnd) => void;
}

/** The chunk `send` hands to the connection's corked write (cork runs its callback synchronously). */
const NOTHING = Buffer.alloc(0);
let outgoing: Buffer = NOTHING;

export class SseConnection {
  /** The sequence of the last change handed to this connection. */
  position: bigint;
  /** `position` at the last heartbeat tick: unchanged since means the stream idled and needs a beat. */
  positionAtBeat: bigint;
  private closed = false;
  /** When the socket last refused a write and has not drained since; null while writable. */
  private stalledSince: number | null = null;
  /** Paused while stalled (uWS's own write timeout is off then); resumed during a probe. */
  private paused = false;
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private accepted = true;
  /** One closure per connection, not one per write: a fan-out calls it for every stream. */
  private readonly writeOutgoing = () => {
    this.accepted = this.res.write(outgoing);
  };

  constructor(
    private readonly res: HttpResponse,
    position: bigint,
    private readonly maxBufferedBytes: number,
    private readonly events: ConnectionEvents,
    private readonly encoder: StreamEncoder,
  ) {
    this.position = position;
    this.positionAtBeat = position;
    res.onWritable(() => this.drain());
    res.onAborted(() => this.gone('aborted'));
  }

  get open(): boolean {
    return !this.closed;
  }

  /** True while the socket accepts writes without backpressure. */
  get writable(): boolean {
    return !this.closed && this.stalledSince === null;
  }

  /** Writes or queues one chunk; false when the connection is (now) closed. */
  send(frames: SseChunk): boolean {
    if (this.closed) return false;
    const chunk = this.encoder.encode(frames);
    if (this.stalledSince !== null) return this.enqueue(chunk);
    outgoing = chunk;
    this.res.cork(this.writeOutgoing);
    outgoing = NOTHING;
    if (!this.accepted) this.stall();
    return true;
  }

  /**
   * The hub's periodic look at a stalled connection: closed as a slow consumer once stalled for
   * more than `limitMs`, otherwise given one event-loop turn to report that it drained.
   */
  probe(now: number, limitMs: number): void {
    if (this.closed || this.stalledSince === null) return;
    if (now - this.stalledSince > limitMs) {
      this.dropSlow();
      return;
    }
    this.resume();
    setImmediate(() => {
      if (!this.closed && this.stalledSince !== null) this.pause();
    });
  }

  /** Ends the response after whatever is queued, optionally with one last chunk (then the encoder's end). */
  end(last?: SseChunk): void {
    if (this.closed) return;
    const pending = last ? [...this.queue, this.encoder.encode(last)] : [...this.queue];
    const finish = this.encoder.finish();
    if (finish.length > 0) pending.push(finish);
    this.gone('ended');
    this.resume();
    this.res.cork(() => {
      for (const chunk of pending) this.res.write(chunk);
      this.res.end();
    });
  }

  /** Closes the socket at once: the consumer is too slow. */
  dropSlow(): void {
    if (this.closed) return;
    this.gone('slow_consumer');
    this.res.close();
  }

  private stall(): void {
    this.stalledSince = Date.now();
    this.pause();
    this.events.stalled(this);
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.res.pause();
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.res.resume();
  }

  private enqueue(chunk: Buffer): boolean {
    if (this.queuedBytes + chunk.length > this.maxBufferedBytes) {
      this.dropSlow();
      return false;
    }
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    return true;
  }

  /**
   * onWritable. uWS keeps the unsent rest of a refused write, but while an onWritable handler is
   * registered it sends that rest only as part of a later write or uncork — a handler that writes
   * nothing would leave it there (the stream's last frames then wait for the next change or
   * heartbeat). So the queue is written inside a cork, even when it is empty: the uncork flushes.
   */
  private drain(): boolean {
    let accepted = true;
    this.res.cork(() => {
      while (accepted && !this.closed && this.queue.length > 0) {
        const chunk = this.queue.shift()!;
        this.queuedBytes -= chunk.length;
        accepted = this.res.write(chunk);
      }
    });
    if (this.closed) return true;
    if (!accepted) return false;
    this.stalledSince = null;
    this.events.drained(this);
    return true;
  }

  private gone(how: ConnectionEnd): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.queuedBytes = 0;
    this.events.gone(this, how);
  }
}
