/**
 * A durable consumer from an application's side (spec §2.5, §4.3, §6): the consumer routes with the credential
 * header (`x-node-consumer-credential`, never logged), and `followConsumer`, which reads the consumer's change
 * batches with the spec's conforming reconnect policy (§4.8, as `followChanges` does for the stream):
 *
 *   - every session (the first, and each after a failure) renews the lease with `redeliver`, so delivery resumes
 *     right after the acknowledged change; a consumer that does not exist is created at `start()` — the
 *     application's own committed position — and one the application refuses (`accept`) is deleted and created
 *     again there;
 *   - network failures, 5xx, 408 and 429 start a new session after an exponential backoff with jitter (reset once a
 *     batch arrives);
 *   - other 4xx answers surface as NodeHttpError;
 *   - 410 `reset_required` / `cursor_expired`, or a `reset_required` envelope, stop with a typed outcome asking the
 *     application to snapshot (query-and-follow) or resubscribe;
 *   - an abort signal stops without error.
 *
 * An empty batch waits: the change head (`…/changes/head`, a read) is polled every `idlePollMs` until it passes the
 * delivered watermark, and at least every third of the lease a batch is asked for again, which renews the lease.
 * The application acknowledges with `api.ack(cursor)` once its commit is durable; redelivered changes it already
 * committed are its to skip (by sequence, spec §6 rule 5).
 */
import { abortableSleep, backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy, type ChangeEnvelope, type FollowOutcome } from './follow.js';
import { httpError, NodeHttpError, type NodeClient } from './request.js';

export interface ConsumerView {
  readonly id: string;
  readonly processor: string;
  readonly instance: string;
  readonly role: string;
  readonly leaseTtlSeconds: number;
  readonly lease: { readonly expiresAt: string; readonly active: boolean };
  readonly delivered: { readonly sequence: string; readonly cursor: string };
  readonly acknowledged: { readonly sequence: string; readonly cursor: string };
}

export type ConsumerStart =
  | { readonly position: 'earliest_retained' | 'current_head' }
  | { readonly position: 'cursor'; readonly cursor: string };

export interface ConsumerBatch {
  readonly data: ChangeEnvelope[];
  readonly nextCursor: string | null;
  readonly consumer: ConsumerView;
}

export interface ConsumerSettings {
  readonly id: string;
  /** The consumer's secret (at least 16 characters); sent only in the credential header. */
  readonly credential: string;
  readonly role: 'required' | 'best_effort';
  readonly leaseTtlSeconds: number;
}

/** The consumer routes of one consumer of one processor. Every non-2xx answer throws NodeHttpError. */
export interface ConsumerApi {
  readonly settings: Omit<ConsumerSettings, 'credential'>;
  /** Renews the lease (with `redeliver`, delivery moves back to the acknowledged change); null when the consumer does not exist. */
  lease(redeliver: boolean, signal?: AbortSignal): Promise<ConsumerView | null>;
  create(start: ConsumerStart, signal?: AbortSignal): Promise<ConsumerView>;
  /** False when there was no such consumer. */
  remove(signal?: AbortSignal): Promise<boolean>;
  changes(limit: number, signal?: AbortSignal): Promise<ConsumerBatch>;
  ack(cursor: string, signal?: AbortSignal): Promise<ConsumerView>;
  /** The processor's change head (sequence, and the cursor of the change at it when retained). */
  head(signal?: AbortSignal): Promise<{ readonly sequence: string; readonly cursor: string | null }>;
}

const CREDENTIAL_HEADER = 'x-node-consumer-credential';

export function consumerApi(client: NodeClient, processor: string, settings: ConsumerSettings): ConsumerApi {
  const base = `/v1/processors/${encodeURIComponent(processor)}`;
  const path = `${base}/consumers/${encodeURIComponent(settings.id)}`;
  const call = async (method: string, url: string, body: unknown, signal: AbortSignal | undefined, credential = true): Promise<Response> => {
    const headers: Record<string, string> = {};
    if (credential) headers[CREDENTIAL_HEADER] = settings.credential;
    if (body !== undefined) headers['content-type'] = 'application/json';
    return client.request(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), ...(signal ? { signal } : {}) });
  };
  const json = async <T>(response: Response): Promise<T> => {
    if (!response.ok) throw await httpError(response);
    return (await response.json()) as T;
  };
  const { credential: _secret, ...visible } = settings;
  return {
    settings: visible,
    async lease(redeliver, signal) {
      const response = await call('POST', `${path}/lease`, { redeliver }, signal);
      if (response.status === 404) {
        await response.body?.cancel();
        return null;
      }
      return json<ConsumerView>(response);
    },
    async create(start, signal) {
      const body = { id: settings.id, role: settings.role, start, leaseTtlSeconds: settings.leaseTtlSeconds, credential: settings.credential };
      return json<ConsumerView>(await call('POST', `${base}/consumers`, body, signal, false));
    },
    async remove(signal) {
      const response = await call('DELETE', path, undefined, signal);
      if (response.status === 404) {
        await response.body?.cancel();
        return false;
      }
      if (!response.ok) throw await httpError(response);
      await response.body?.cancel();
      return true;
    },
    async changes(limit, signal) {
      return json<ConsumerBatch>(await call('GET', `${path}/changes?limit=${limit}`, undefined, signal));
    },
    async ack(cursor, signal) {
      return json<ConsumerView>(await call('POST', `${path}/ack`, { cursor }, signal));
    },
    async head(signal) {
      return json<{ sequence: string; cursor: string | null }>(await call('GET', `${base}/changes/head`, undefined, signal, false));
    },
  };
}

/** True for what the reconnect policy retries: network failures (anything not an HTTP answer), 5xx, 408 and 429. */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof NodeHttpError)) return !(error instanceof Error && error.name === 'UnsafeRequestPathError');
  return error.status >= 500 || error.status === 408 || error.status === 429;
}

/** True for an answer that asks the application to snapshot or resubscribe (410 reset_required / cursor_expired). */
export function isResetAnswer(error: unknown): error is NodeHttpError {
  return error instanceof NodeHttpError && error.status === 410 && (error.code === 'reset_required' || error.code === 'cursor_expired');
}

export interface ConsumerFollowOptions {
  readonly api: ConsumerApi;
  /** Where a consumer that does not exist (or was refused) is created: the application's committed position, asked at each creation. */
  readonly start: () => ConsumerStart;
  /** Changes per batch (at most the node's `limits.max_page_limit`: a 413 naming a lower maximum lowers it). */
  readonly limit: number;
  readonly idlePollMs?: number;
  /** Called with the consumer after each session opens; false deletes it and creates it again at `start()`. */
  readonly accept?: (consumer: ConsumerView) => boolean;
  readonly signal?: AbortSignal;
  readonly backoff?: Partial<BackoffPolicy>;
  /** Called before each reconnect wait (observability; tests). */
  readonly onReconnect?: (info: { attempt: number; delayMs: number; reason: string }) => void;
  /** Called once when a 413 lowered the batch size to the node's maximum. */
  readonly onLimit?: (limit: number) => void;
  readonly random?: () => number;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Yields each non-empty batch of the consumer's changes; returns the outcome when the consumer can no longer be
 * followed. The next batch is fetched when the application asks for it (ask before applying the current one to
 * overlap the two).
 */
export async function* followConsumer(options: ConsumerFollowOptions): AsyncGenerator<ConsumerBatch, FollowOutcome> {
  const policy = { ...DEFAULT_BACKOFF, ...options.backoff };
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? abortableSleep;
  const idlePollMs = options.idlePollMs ?? 100;
  const { api, signal } = options;
  let limit = options.limit;
  let lastCursor: string | null = null;
  let session = false;
  let attempt = 0;
  const open = async (): Promise<void> => {
    let view = await api.lease(true, signal);
    if (view && options.accept && !options.accept(view)) {
      await api.remove(signal);
      view = null;
    }
    if (!view) await api.create(options.start(), signal);
  };
  const idle = async (delivered: bigint): Promise<void> => {
    const renewBy = Date.now() + (api.settings.leaseTtlSeconds * 1000) / 3;
    while (!signal?.aborted && Date.now() < renewBy) {
      await sleep(idlePollMs, signal);
      if (signal?.aborted) return;
      if (BigInt((await api.head(signal)).sequence) > delivered) return;
    }
  };
  for (;;) {
    if (signal?.aborted) return { kind: 'aborted', lastCursor };
    let reason: string;
    try {
      if (!session) {
        await open();
        session = true;
      }
      const batch = await api.changes(limit, signal);
      attempt = 0;
      if (batch.data.length === 0) {
        await idle(BigInt(batch.consumer.delivered.sequence));
        continue;
      }
      const reset = batch.data.findIndex((change) => change.operation === 'reset_required');
      if (reset >= 0) {
        if (reset > 0) yield { ...batch, data: batch.data.slice(0, reset) };
        return { kind: 'reset_required', lastCursor: batch.data[reset - 1]?.cursor ?? lastCursor, action: 'snapshot_or_resubscribe', reason: 'the consumer delivered reset_required', envelope: batch.data[reset]! };
      }
      yield batch;
      lastCursor = batch.data[batch.data.length - 1]!.cursor;
      continue;
    } catch (error) {
      if (signal?.aborted) return { kind: 'aborted', lastCursor };
      if (isResetAnswer(error)) return { kind: 'reset_required', lastCursor, action: 'snapshot_or_resubscribe', reason: `${error.code}: ${error.message}`, envelope: null };
      const maxPageLimit = error instanceof NodeHttpError && error.code === 'query_too_expensive' ? Number(error.details?.maxPageLimit) : NaN;
      if (Number.isSafeInteger(maxPageLimit) && maxPageLimit >= 1 && maxPageLimit < limit) {
        limit = maxPageLimit;
        options.onLimit?.(limit);
        continue;
      }
      if (!isTransient(error)) throw error;
      session = false;
      reason = error instanceof Error ? error.message : String(error);
    }
    attempt += 1;
    const delayMs = backoffDelay(policy, attempt, random);
    options.onReconnect?.({ attempt, delayMs, reason });
    await sleep(delayMs, signal);
  }
}
