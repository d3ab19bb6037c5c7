/**
 * A Beacon API (HTTP/JSON) client for the finality routes: GET with a per-request timeout and
 * bounded retries with exponential backoff and jitter for failures a retry can fix (transport,
 * timeout, HTTP 5xx and 429). 404 is an answer ("this node does not have it"), never retried.
 * Messages show the endpoint without credentials or query.
 */
import { retryDelay, sleep, type BackoffPolicy } from '../rpc/backoff.js';
import { parseEndpoint } from '../rpc/endpoint.js';

export interface BeaconClientOptions {
  readonly url: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  readonly signal?: AbortSignal;
}

export type BeaconFailure = 'transport' | 'timeout' | 'http' | 'response';

export class BeaconApiError extends Error {
  override name = 'BeaconApiError';
  constructor(readonly endpoint: string, readonly path: string, readonly failure: BeaconFailure, readonly attempts: number, detail: string) {
    super(`Beacon API ${path} at ${endpoint} failed (${failure}) after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${detail}`);
  }
}

export interface BeaconClient {
  /** The endpoint as it may be logged. */
  readonly endpoint: string;
  /** The JSON body, or null when the endpoint answers 404 (it does not have the object). */
  get(path: string): Promise<unknown | null>;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;

export function createBeaconClient(options: BeaconClientOptions): BeaconClient {
  const endpoint = parseEndpoint(options.url, 'http');
  const base = endpoint.requestUrl.replace(/\/+$/, '');
  const policy: BackoffPolicy = { initialMs: options.backoffInitialMs, maxMs: options.backoffMaxMs };

  async function once(path: string): Promise<{ ok: true; body: unknown | null } | { ok: false; retryable: boolean; failure: BeaconFailure; detail: string }> {
    const attempt = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; attempt.abort(); }, options.timeoutMs);
    const onShutdown = () => attempt.abort(options.signal!.reason);
    options.signal?.addEventListener('abort', onShutdown, { once: true });
    try {
      const url = new URL(base + path);
      const response = await fetch(url, { headers: { accept: 'application/json', ...endpoint.headers }, signal: attempt.signal });
      if (response.status === 404) {
        await response.body?.cancel();
        return { ok: true, body: null };
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        return { ok: false, retryable: response.status >= 500 || response.status === 429, failure: 'http', detail: `HTTP ${response.status}` };
      }
      const text = await response.text();
      if (text.length > MAX_BODY_BYTES) return { ok: false, retryable: false, failure: 'response', detail: `a body over ${MAX_BODY_BYTES} bytes` };
      try {
        return { ok: true, body: JSON.parse(text) };
      } catch {
        return { ok: false, retryable: false, failure: 'response', detail: 'the body is not JSON' };
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (timedOut) return { ok: false, retryable: true, failure: 'timeout', detail: `no answer within ${options.timeoutMs} ms` };
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return { ok: false, retryable: true, failure: 'transport', detail: endpoint.redact(cause?.code ?? cause?.message ?? (error as Error).message) };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onShutdown);
    }
  }

  return {
    endpoint: endpoint.display,
    async get(path: string): Promise<unknown | null> {
      for (let attempt = 1; ; attempt += 1) {
        if (options.signal?.aborted) throw options.signal.reason;
        const result = await once(path);
        if (result.ok) return result.body;
        if (!result.retryable || attempt > options.maxRetries) throw new BeaconApiError(endpoint.display, path, result.failure, attempt, result.detail);
        await sleep(retryDelay(attempt, policy), options.signal);
      }
    },
  };
}
