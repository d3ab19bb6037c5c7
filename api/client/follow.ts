/**
 * Follows a processor's change stream (`GET …/processors/{p}/stream`, spec §4.8) with the spec's
 * conforming reconnect policy:
 *
 *   - resume with `after` = the cursor of the last change the application fully handled (the
 *     generator records it only when the application asks for the next change);
 *   - a clean server close, a network failure, 5xx, 408 and 429 reconnect after an exponential
 *     backoff with jitter (the delay resets once a connection delivers a change);
 *   - other 4xx answers (authentication, validation, delivery_disabled…) surface as NodeHttpError;
 *   - `reset_required` — a terminal SSE event, or a 410 `reset_required` / `cursor_expired` answer —
 *     stops with a typed outcome asking the application to snapshot (query-and-follow) or resubscribe;
 *   - an abort signal stops without error (outcome `aborted`).
 *
 * Parsing is fetch-based (no EventSource), so the bearer travels in a header through the request
 * helper's origin checks, and the cursor handed back is exactly the one the application handled.
 */
import { httpError, NodeHttpError, type NodeClient } from './request.js';
import { parseSse } from './sse-parser.js';

export interface ChangeEnvelope {
  readonly sequence: string;
  readonly cursor: string;
  readonly operation: 'apply' | 'undo' | 'finalized' | 'reset_required';
  readonly kind: string;
  readonly key: string | null;
  readonly block: { number: number; hash: string; parentHash: string; timestamp: number } | null;
  readonly finality: string;
  readonly data: unknown;
  readonly [field: string]: unknown;
}

export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
  /** Fraction of each delay that is randomized: delay × (1 − jitter × random()). */
  readonly jitter: number;
}

export interface FollowOptions {
  readonly client: NodeClient;
  readonly processor: string;
  /** Resume after this cursor (e.g. a snapshot's boundaryCursor); absent: the earliest retained change. */
  readonly after?: string | null;
  readonly signal?: AbortSignal;
  readonly backoff?: Partial<BackoffPolicy>;
  /** Called with every connection's hello frame. */
  readonly onHello?: (hello: Record<string, unknown>) => void;
  /** Called before each reconnect wait (observability; tests). */
  readonly onReconnect?: (info: { attempt: number; delayMs: number; reason: string }) => void;
  /** Injected randomness and sleep (tests). */
  readonly random?: () => number;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export type FollowOutcome =
  | { readonly kind: 'aborted'; readonly lastCursor: string | null }
  | {
    readonly kind: 'reset_required';
    /** The cursor of the last change handled; it cannot be resumed from. */
    readonly lastCursor: string | null;
    /** What the application must do: take a snapshot (query-and-follow) and follow its boundaryCursor, or resubscribe. */
    readonly action: 'snapshot_or_resubscribe';
    readonly reason: string;
    readonly envelope: ChangeEnvelope | null;
  };

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 250, maxMs: 30_000, jitter: 0.5 };

/** The delay before reconnect attempt `attempt` (1-based). */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number): number {
  const exponential = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(exponential * (1 - policy.jitter * random()));
}

/** Waits `ms`, or less when `signal` aborts (never rejects). */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

const RETRYABLE_STATUS = new Set([408, 429]);

class Reconnect extends Error {}

/**
 * Yields each change of the stream; returns the outcome when the stream can no longer be followed.
 * A change's cursor becomes the resume position when the application asks for the next one.
 */
export async function* followChanges(options: FollowOptions): AsyncGenerator<ChangeEnvelope, FollowOutcome> {
  const policy = { ...DEFAULT_BACKOFF, ...options.backoff };
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? abortableSleep;
  const { signal } = options;
  let lastCursor = options.after ?? null;
  let attempt = 0;
  const base = `/v1/processors/${encodeURIComponent(options.processor)}/stream`;
  for (;;) {
    if (signal?.aborted) return { kind: 'aborted', lastCursor };
    let reason: string;
    try {
      const path = lastCursor === null ? base : `${base}?after=${encodeURIComponent(lastCursor)}`;
      const response = await options.client.request(path, { headers: { accept: 'text/event-stream' }, signal });
      if (response.status === 410) {
        const error = await httpError(response);
        if (error.code === 'reset_required' || error.code === 'cursor_expired') {
          return { kind: 'reset_required', lastCursor, action: 'snapshot_or_resubscribe', reason: `${error.code}: ${error.message}`, envelope: null };
        }
        throw error;
      }
      if (response.status >= 500 || RETRYABLE_STATUS.has(response.status)) throw new Reconnect(`HTTP ${response.status}`);
      if (!response.ok) throw await httpError(response);
      if (!response.body) throw new Reconnect('response without a body');
      for await (const message of parseSse(response.body as unknown as AsyncIterable<Uint8Array>)) {
        if (message.event === 'hello') {
          options.onHello?.(JSON.parse(message.data) as Record<string, unknown>);
          continue;
        }
        const envelope = JSON.parse(message.data) as ChangeEnvelope;
        if (message.event === 'reset_required') {
          return { kind: 'reset_required', lastCursor, action: 'snapshot_or_resubscribe', reason: 'the stream sent reset_required', envelope };
        }
        attempt = 0;
        yield envelope;
        lastCursor = message.id ?? envelope.cursor;
      }
      reason = 'the server closed the stream';
    } catch (error) {
      if (signal?.aborted) return { kind: 'aborted', lastCursor };
      if (error instanceof NodeHttpError) throw error;
      reason = error instanceof Error ? error.message : String(error);
    }
    attempt += 1;
    const delayMs = backoffDelay(policy, attempt, random);
    options.onReconnect?.({ attempt, delayMs, reason });
    await sleep(delayMs, signal);
  }
}

/**
 * Runs `followChanges`, awaiting `handle` for each change (apply it durably there); resolves with the
 * outcome. Throws what the stream surfaces (NodeHttpError) or what `handle` throws.
 */
export async function runFollow(options: FollowOptions, handle: (change: ChangeEnvelope) => unknown): Promise<FollowOutcome> {
  const changes = followChanges(options);
  for (;;) {
    const next = await changes.next();
    if (next.done) return next.value;
    await handle(next.value);
  }
}
