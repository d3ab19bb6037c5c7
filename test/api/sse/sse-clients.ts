/**
 * SSE clients for tests: a raw fetch reader (exact bytes, end of stream, headers) and an
 * `eventsource` EventSource that records every event it dispatches. Both are closed after the test.
 */
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
