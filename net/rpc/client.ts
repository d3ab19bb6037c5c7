/**
 * A small JSON-RPC 2.0 client over fetch: single calls and batches, a per-request timeout, and bounded retries with
 * exponential backoff and jitter for failures a retry can fix (transport errors, timeouts, HTTP 5xx and 429). A
 * JSON-RPC error object is the upstream's answer and is never retried. Every failure is an `UpstreamError` whose
 * message shows the endpoint without credentials or query.
 */
import { isAscii } from 'node:buffer';
import { retryDelay, sleep, type BackoffPolicy } from './backoff.js';
import { parseEndpoint, type Endpoint } from './endpoint.js';
import { UpstreamError, type UpstreamFailure } from './errors.js';

export interface RpcCall {
  readonly method: string;
  readonly params: readonly unknown[];
}

export interface RpcClientOptions {
  readonly url: string;
  readonly timeoutMs: number;
  /** Retries after the first attempt (0: fail at once). */
  readonly maxRetries: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  /** Aborts calls in flight and retry waits (shutdown); they reject with the signal's reason. */
  readonly signal?: AbortSignal;
  readonly random?: () => number;
}

export interface RpcClient {
  /** The endpoint as it may be logged. */
  readonly endpoint: string;
  call<Result = unknown>(method: string, params: readonly unknown[]): Promise<Result>;
  /** Sends the calls in one HTTP request; results in call order. The first call that failed throws. */
  batch(calls: readonly RpcCall[]): Promise<unknown[]>;
  /**
   * The same HTTP request as `batch`, with the same retries, answering the response body's bytes unparsed (so another
   * thread can parse them; they can be transferred there); `resolveBatch` turns them into `batch`'s results or its error.
   */
  batchRaw(calls: readonly RpcCall[]): Promise<RawBatch>;
  resolveBatch(raw: RawBatch): unknown[];
}

/** A batch answered with HTTP 200, not parsed yet: the body's bytes, the request ids in call order and the attempts it took. */
export interface RawBatch {
  readonly bytes: Uint8Array;
  readonly ids: readonly number[];
  readonly methods: readonly string[];
  readonly attempts: number;
}

interface JsonRpcResponse {
  readonly id?: unknown;
  readonly result?: unknown;
  readonly error?: { readonly code?: unknown; readonly message?: unknown };
}

interface Answer<Body = unknown> {
  readonly body: Body;
  readonly attempts: number;
}

/** A failed attempt, before it is known whether it will be retried. */
class AttemptError extends Error {
  constructor(
    readonly failure: UpstreamFailure,
    readonly retryable: boolean,
    readonly detail: string,
    readonly extra: { status?: number; retryAfterMs?: number } = {},
  ) {
    super(detail);
  }
}

const MAX_DETAIL_CHARS = 160;

export function createRpcClient(options: RpcClientOptions): RpcClient {
  const endpoint = parseEndpoint(options.url, 'http');
  const policy: BackoffPolicy = { initialMs: options.backoffInitialMs, maxMs: options.backoffMaxMs };
  let nextId = 1;

  async function send(label: string, body: unknown): Promise<Answer> {
    const answer = await sendRaw(label, body);
    return { body: parseAnswer(label, answer), attempts: answer.attempts };
  }

  /** The body's bytes, and the attempts it took; a body that is not JSON fails (not retried) when it is parsed. */
  async function sendRaw(label: string, body: unknown): Promise<Answer<Uint8Array>> {
    for (let attempt = 1; ; attempt += 1) {
      if (options.signal?.aborted) throw options.signal.reason;
      try {
        return { body: await postOnce(endpoint, body, options), attempts: attempt };
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (!(error instanceof AttemptError)) throw error;
        if (!error.retryable || attempt > options.maxRetries) {
          throw new UpstreamError({
            method: label, url: endpoint.display, failure: error.failure, attempts: attempt,
            status: error.extra.status, detail: endpoint.redact(error.detail),
          });
        }
        const wait = Math.max(retryDelay(attempt, policy, options.random), Math.min(error.extra.retryAfterMs ?? 0, policy.maxMs));
        await sleep(wait, options.signal);
      }
    }
  }

  return {
    endpoint: endpoint.display,
    async call<Result>(method: string, params: readonly unknown[]): Promise<Result> {
      const id = nextId++;
      const answer = await send(method, { jsonrpc: '2.0', id, method, params });
      return resultOf(answer.body, id, method, answer.attempts, endpoint) as Result;
    },
    async batch(calls: readonly RpcCall[]): Promise<unknown[]> {
      if (calls.length === 0) return [];
      return resolveBatch(await batchRaw(calls));
    },
    batchRaw,
    resolveBatch,
  };

  async function batchRaw(calls: readonly RpcCall[]): Promise<RawBatch> {
    const ids = calls.map(() => nextId++);
    const methods = calls.map((c) => c.method);
    const answer = await sendRaw(methods.join('+'), calls.map((c, i) => ({ jsonrpc: '2.0', id: ids[i], method: c.method, params: c.params })));
    return { bytes: answer.body, ids, methods, attempts: answer.attempts };
  }
  function resolveBatch(raw: RawBatch): unknown[] {
    const { ids, attempts } = raw;
    const label = raw.methods.join('+');
    const body = parseAnswer(label, { body: raw.bytes, attempts });
    // An upstream that refuses batches answers with one error object instead of an array.
    if (!Array.isArray(body)) {
      resultOf(body, ids[0], label, attempts, endpoint);
      throw new UpstreamError({ method: label, url: endpoint.display, failure: 'response', attempts, detail: 'a batch was answered with a single object' });
    }
    const byId = new Map<unknown, unknown>(body.map((entry: JsonRpcResponse) => [entry?.id, entry]));
    return raw.methods.map((method, i) => resultOf(byId.get(ids[i]), ids[i], method, attempts, endpoint));
  }

  function parseAnswer(label: string, answer: Answer<Uint8Array>): unknown {
    const text = jsonText(answer.body);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new UpstreamError({
        method: label, url: endpoint.display, failure: 'response', attempts: answer.attempts,
        detail: endpoint.redact(`the body is not JSON: ${text.slice(0, MAX_DETAIL_CHARS)}`),
      });
    }
  }
}

/**
 * A JSON body's text. JSON-RPC answers are ASCII nearly always (hex, numbers, field names): checked as such (SIMD),
 * they become a one-byte string by a plain copy; anything else is decoded as UTF-8.
 */
export function jsonText(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return isAscii(buffer) ? buffer.toString('latin1') : buffer.toString('utf8');
}

async function postOnce(endpoint: Endpoint, body: unknown, options: RpcClientOptions): Promise<Uint8Array> {
  // One controller per attempt, released in `finally`: a poller makes millions of attempts over its life.
  const attempt = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    attempt.abort();
  }, options.timeoutMs);
  const onShutdown = () => attempt.abort(options.signal!.reason);
  options.signal?.addEventListener('abort', onShutdown, { once: true });
  let bytes: Uint8Array;
  let response: Response;
  try {
    response = await fetch(endpoint.requestUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...endpoint.headers },
      body: JSON.stringify(body),
      signal: attempt.signal,
    });
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    if (timedOut) throw new AttemptError('timeout', true, `no answer within ${options.timeoutMs} ms`);
    throw new AttemptError('transport', true, transportDetail(error));
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onShutdown);
  }
  if (response.status !== 200) {
    const retryable = response.status >= 500 || response.status === 429;
    const excerpt = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 4 * MAX_DETAIL_CHARS)).toString('utf8').slice(0, MAX_DETAIL_CHARS).replace(/\s+/g, ' ').trim();
    throw new AttemptError('http', retryable, `HTTP ${response.status}${excerpt ? ` ${excerpt}` : ''}`, {
      status: response.status, retryAfterMs: retryAfterMs(response.headers.get('retry-after')),
    });
  }
  return bytes;
}

/** The result of one response object, or an `UpstreamError` for its error object or a malformed answer. */
function resultOf(response: unknown, id: number | undefined, method: string, attempts: number, endpoint: Endpoint): unknown {
  const fail = (failure: UpstreamFailure, detail: string, code?: number): never => {
    throw new UpstreamError({ method, url: endpoint.display, failure, attempts, code, detail: endpoint.redact(detail) });
  };
  if (typeof response !== 'object' || response === null) return fail('response', `no response object for request id ${id}`);
  const { error, result } = response as JsonRpcResponse;
  if (error !== undefined && error !== null) {
    const code = typeof error.code === 'number' ? error.code : undefined;
    return fail('rpc', String(error.message ?? 'no message').slice(0, MAX_DETAIL_CHARS), code);
  }
  if ((response as JsonRpcResponse).id !== id) return fail('response', `answer id ${String((response as JsonRpcResponse).id)} does not match request id ${id}`);
  if (!('result' in response)) return fail('response', 'neither result nor error in the answer');
  return result;
}

function transportDetail(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause && typeof cause.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}
