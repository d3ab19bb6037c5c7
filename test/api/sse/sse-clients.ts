/**
 * SSE clients for tests: a raw fetch reader (decoded text, end of stream, headers), a node:http reader
 * (the exact body bytes, with only the request headers given), and an `eventsource` EventSource that
 * records every event it dispatches. All are closed after the test.
 */
import { get as httpGet } from 'node:http';
import type { TestContext } from 'node:test';
import { EventSource, type EventSourceInit } from 'eventsource';

export interface RawStream {
  readonly status: number;
  readonly headers: Headers;
  /** Reads until `predicate(text)` holds or the server ends the stream; throws after `timeoutMs`. */
  readUntil(predicate: (text: string) => boolean, timeoutMs?: number): Promise<{ text: string; ended: boolean }>;
  close(): void;
}

export async function openRawStream(t: TestContext, url: string, headers: Record<string, string> = {}): Promise<RawStream> {
  const controller = new AbortController();
  t.after(() => controller.abort());
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  return {
    status: response.status,
    headers: response.headers,
    async readUntil(predicate, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!ended && !predicate(text)) {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`stream did not reach the expected state in ${timeoutMs} ms; got ${text.length} chars: ${text.slice(-300)}`)), Math.max(1, deadline - Date.now()));
        });
        try {
          const chunk = await Promise.race([reader.read(), timeout]);
          if (chunk.done) ended = true;
          else text += decoder.decode(chunk.value, { stream: true });
        } finally {
          clearTimeout(timer);
        }
      }
      return { text, ended };
    },
    close: () => controller.abort(),
  };
}

export interface ReceivedEvent {
  readonly type: string;
  readonly lastEventId: string;
  readonly data: string;
}

export interface RecordingEventSource {
  readonly source: EventSource;
  readonly events: ReceivedEvent[];
  readonly errors: number[];
  waitFor(predicate: (events: readonly ReceivedEvent[]) => boolean, timeoutMs?: number): Promise<void>;
}

const EVENT_TYPES = ['hello', 'apply', 'undo', 'finalized', 'reset_required', 'message'];

export function recordEventSource(t: TestContext, url: string, init?: EventSourceInit): RecordingEventSource {
  const source = new EventSource(url, init);
  t.after(() => source.close());
  const events: ReceivedEvent[] = [];
  const errors: number[] = [];
  for (const type of EVENT_TYPES) {
    source.addEventListener(type, (event) => events.push({ type, lastEventId: event.lastEventId, data: event.data }));
  }
  source.addEventListener('error', () => errors.push(Date.now()));
  return {
    source,
    events,
    errors,
    async waitFor(predicate, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(events)) {
        if (Date.now() > deadline) throw new Error(`EventSource did not reach the expected state in ${timeoutMs} ms; got ${events.map((e) => e.type).join(',')}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  };
}

/** The change events (not hello) with their envelope sequences. */
export function changeSequences(events: readonly ReceivedEvent[]): string[] {
  return events.filter((e) => e.type !== 'hello').map((e) => (JSON.parse(e.data) as { sequence: string }).sequence);
}

/**
 * A fetch for `EventSourceInit.fetch` that records each response's `Content-Encoding` (null when the
 * response was not coded): the eventsource package's fetch (undici) asks for and decodes gzip itself.
 */
export function encodingRecorder(): { fetch: typeof fetch; encodings: Array<string | null> } {
  const encodings: Array<string | null> = [];
  return {
    encodings,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      encodings.push(response.headers.get('content-encoding'));
      return response;
    },
  };
}

export interface RawBytesStream {
  readonly status: number;
  readonly headers: import('node:http').IncomingHttpHeaders;
  /** Every body byte so far, exactly as it came (no content decoding). */
  bytes(): Buffer;
  /** Waits until `predicate(bytes)` holds or the server ends the response; throws after `timeoutMs`. */
  readUntil(predicate: (bytes: Buffer) => boolean, timeoutMs?: number): Promise<{ bytes: Buffer; ended: boolean }>;
}

/** A stream read with node:http: it sends only the headers given (no Accept-Encoding unless asked) and decodes nothing. */
export function openNodeHttpStream(t: TestContext, url: string, headers: Record<string, string> = {}): Promise<RawBytesStream> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { agent: false, headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      let ended = false;
      let wake: (() => void) | null = null;
      res.on('data', (chunk: Buffer) => { chunks.push(chunk); wake?.(); });
      res.on('end', () => { ended = true; wake?.(); });
      res.on('error', () => { ended = true; wake?.(); });
      const bytes = () => Buffer.concat(chunks);
      resolve({
        status: res.statusCode!,
        headers: res.headers,
        bytes,
        async readUntil(predicate, timeoutMs = 60_000) {
          const deadline = Date.now() + timeoutMs;
          while (!ended && !predicate(bytes())) {
            if (Date.now() > deadline) throw new Error(`stream did not reach the expected state in ${timeoutMs} ms; got ${bytes().length} bytes`);
            await new Promise<void>((woken) => {
              const timer = setTimeout(() => { wake = null; woken(); }, Math.max(1, deadline - Date.now()));
              wake = () => { clearTimeout(timer); wake = null; woken(); };
            });
          }
          return { bytes: bytes(), ended };
        },
      });
    });
    request.on('error', reject);
    t.after(() => request.destroy());
  });
}
