/**
 * A Beacon API event-stream subscription (`GET /eth/v1/events?topics=…`, text/event-stream): each
 * event is handed over as its topic and raw `data` text. A stream that ends, fails or is refused
 * (an endpoint without the events route answers 4xx) is opened again after a bounded exponential
 * backoff with jitter; `onState` reports each change between connected and not, so the caller can
 * say that it falls back to polling. Frames and lines are bounded: a peer cannot grow memory.
 */
import { retryDelay, sleep, type BackoffPolicy } from '../rpc/backoff.js';
import { parseEndpoint } from '../rpc/endpoint.js';

export interface BeaconEventStreamOptions {
  readonly url: string;
  readonly topics: readonly string[];
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  onEvent(topic: string, data: string): void;
  /** connected: the stream is open; otherwise why it is not (the caller polls meanwhile). */
  onState?(state: { connected: true } | { connected: false; reason: string }): void;
}

export interface BeaconEventStream {
  /** The endpoint as it may be logged. */
  readonly endpoint: string;
  close(): void;
}

/** One event's data may not exceed this (a mainnet finality update is ~10 KB of JSON). */
const MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** Parses text/event-stream chunks into events (`event:` and `data:` fields; comments and ids ignored). */
export class EventStreamParser {
  private buffer = '';
  /** How much of `buffer` is known to hold no line end. */
  private scanned = 0;
  private topic = 'message';
  private data: string[] = [];
  private size = 0;

  constructor(private readonly emit: (topic: string, data: string) => void) {}

  push(chunk: string): void {
    this.buffer += chunk;
    let start = 0;
    for (let i = this.scanned; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // A \r at the end of the text may be the first half of \r\n: wait for the next chunk.
      if (c === 13 && i === this.buffer.length - 1) break;
      this.line(this.buffer.slice(start, i));
      if (c === 13 && this.buffer.charCodeAt(i + 1) === 10) i += 1;
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    // Everything left is one unfinished line (possibly ending in \r): scan only what arrives next.
    this.scanned = this.buffer.endsWith('\r') ? this.buffer.length - 1 : this.buffer.length;
    if (this.buffer.length > MAX_FRAME_BYTES) throw new Error(`an event-stream line over ${MAX_FRAME_BYTES} bytes`);
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) this.emit(this.topic, this.data.join('\n'));
      this.topic = 'message';
      this.data = [];
      this.size = 0;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'event') this.topic = value;
    else if (name === 'data') {
      this.size += value.length;
      if (this.size > MAX_FRAME_BYTES) throw new Error(`an event over ${MAX_FRAME_BYTES} bytes`);
      this.data.push(value);
    }
  }
}

export function subscribeBeaconEvents(options: BeaconEventStreamOptions): BeaconEventStream {
  const endpoint = parseEndpoint(options.url, 'http');
  const base = endpoint.requestUrl.replace(/\/+$/, '');
  const policy: BackoffPolicy = { initialMs: options.backoffInitialMs, maxMs: options.backoffMaxMs };
  const shutdown = new AbortController();
  let connected = false;
  let lastReason = '';

  const report = (state: { connected: true } | { connected: false; reason: string }) => {
    if (state.connected === connected && (state.connected || state.reason === lastReason)) return;
    connected = state.connected;
    lastReason = state.connected ? '' : state.reason;
    options.onState?.(state);
  };

  async function once(): Promise<string> {
    const url = `${base}/eth/v1/events?topics=${options.topics.map(encodeURIComponent).join(',')}`;
    const response = await fetch(url, { headers: { accept: 'text/event-stream', ...endpoint.headers }, signal: shutdown.signal });
    if (response.status !== 200 || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      await response.body?.cancel();
      return `HTTP ${response.status} ${response.headers.get('content-type') ?? ''}`.trim();
    }
    report({ connected: true });
    const parser = new EventStreamParser((topic, data) => options.onEvent(topic, data));
    const decoder = new TextDecoder();
    const reader = response.body!.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return 'the stream ended';
        parser.push(decoder.decode(value, { stream: true }));
      }
    } finally {
      reader.releaseLock();
      await response.body?.cancel().catch(() => undefined);
    }
  }

  void (async () => {
    let attempt = 0;
    while (!shutdown.signal.aborted) {
      let reason: string;
      try {
        reason = await once();
        if (connected) attempt = 0;
      } catch (error) {
        if (shutdown.signal.aborted) return;
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        reason = endpoint.redact(cause?.code ?? cause?.message ?? (error as Error).message);
      }
      report({ connected: false, reason });
      attempt += 1;
      try {
        await sleep(retryDelay(attempt, policy), shutdown.signal);
      } catch {
        return;
      }
    }
  })();

  return {
    endpoint: endpoint.display,
    close: () => shutdown.abort(new Error('the event stream is closing')),
  };
}
