/**
 * Request handling on uWebSockets.js: everything a handler needs is read from the request
 * synchronously (uWS invalidates it after the first await), bodies are read with a size limit,
 * every response carries `x-request-id`, and every error leaves in the spec's error shape.
 */
import { STATUS_CODES } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { errorBody, HttpError } from './errors.js';
import type { Logger } from '../runtime/log.js';
import { errorFields } from '../runtime/log.js';

export type Method = 'get' | 'post' | 'put' | 'delete' | 'patch' | 'head' | 'options';

export interface Request {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly params: readonly string[];
  readonly headers: Readonly<Record<string, string>>;
  readonly requestId: string;
  /** The raw request body (empty for methods without one); read before the handler runs, within the size limit. */
  readonly body: Buffer;
}

export interface Reply {
  readonly status?: number;
  /** An object is sent as JSON; a string or Buffer as is. */
  readonly body?: unknown;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export type Handler = (request: Request) => Reply | Promise<Reply>;

export interface HttpOptions {
  readonly maxBodyBytes: number;
  readonly maxUrlBytes: number;
  readonly log: Logger;
  /** Called once per finished request (metrics). */
  readonly onResponse?: (route: string, status: number, seconds: number) => void;
  /** Requests started and not yet answered or aborted (graceful shutdown waits for zero). */
  readonly inFlight: { count: number };
}

/** Headers a handler may read; uWS can only hand them out before the first await. */
const READ_HEADERS = ['authorization', 'content-type', 'content-length', 'accept', 'last-event-id', 'x-node-consumer-credential', 'transfer-encoding'];

export function statusLine(status: number): string {
  return `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
}

export function newRequestId(): string {
  return randomUUID();
}

/** Registers `handler` for `method pattern`, with body reading, error mapping and request ids. */
export function route(app: TemplatedApp, method: Method, pattern: string, handler: Handler, options: HttpOptions): void {
  const register = app[method === 'delete' ? 'del' : method] as (pattern: string, handler: (res: HttpResponse, req: HttpRequest) => void) => TemplatedApp;
  register.call(app, pattern, (res, req) => serve(res, req, method, pattern, handler, options));
}

/** Answers every request no route claims: 405 when the path exists with another method, else 404. */
export function fallback(app: TemplatedApp, knownPaths: (path: string) => readonly string[], options: HttpOptions): void {
  app.any('/*', (res, req) => {
    const handler: Handler = (request) => {
      const allowed = knownPaths(request.path);
      if (allowed.length > 0) throw new HttpError('method_not_allowed', `${request.method} is not allowed on ${request.path}`, { allowed }, 405, { allow: allowed.join(', ') });
      throw new HttpError('not_found', `no route for ${request.method} ${request.path}`);
    };
    serve(res, req, req.getCaseSensitiveMethod().toLowerCase() as Method, '(unmatched)', handler, options);
  });
}

function serve(res: HttpResponse, req: HttpRequest, method: Method, pattern: string, handler: Handler, options: HttpOptions): void {
  const started = performance.now();
  const requestId = newRequestId();
  const state = { aborted: false, done: false };
  options.inFlight.count += 1;
  res.onAborted(() => {
    state.aborted = true;
    if (!state.done) options.inFlight.count -= 1;
  });
  const finish = (reply: Reply) => {
    if (state.aborted || state.done) return;
    state.done = true;
    options.inFlight.count -= 1;
    const status = reply.status ?? 200;
    res.cork(() => writeReply(res, requestId, status, reply));
    options.onResponse?.(pattern, status, (performance.now() - started) / 1000);
  };
  const fail = (error: unknown) => {
    const { status, body, headers } = errorBody(error, requestId);
    if (status >= 500) options.log.error('request failed', { requestId, method, route: pattern, ...errorFields(error) });
    finish({ status, body, headers });
  };

  let request: Omit<Request, 'body'>;
  try {
    request = readRequest(req, method, requestId, pattern, options);
  } catch (error) {
    fail(error);
    return;
  }
  const run = (body: Buffer) => {
    try {
      const result = handler({ ...request, body });
      if (result instanceof Promise) result.then(finish, fail);
      else finish(result);
    } catch (error) {
      fail(error);
    }
  };
  if (method === 'get' || method === 'head' || method === 'delete' || method === 'options') {
    const declared = Number(request.headers['content-length'] ?? '0');
    if (declared > options.maxBodyBytes) return fail(tooLarge(options.maxBodyBytes));
    run(EMPTY);
    return;
  }
  readBody(res, request.headers, options.maxBodyBytes).then(run, fail);
}

const EMPTY = Buffer.alloc(0);

function tooLarge(limit: number): HttpError {
  return new HttpError('payload_too_large', `request body exceeds the limit of ${limit} bytes`, { limitBytes: limit });
}

const parameterCounts = new Map<string, number>();

/** Path parameters of a route pattern, counted once per pattern rather than per request. */
function parameterCountOf(pattern: string): number {
  let count = parameterCounts.get(pattern);
  if (count === undefined) {
    count = (pattern.match(/\/:/g) ?? []).length;
    parameterCounts.set(pattern, count);
  }
  return count;
}

function readRequest(req: HttpRequest, method: Method, requestId: string, pattern: string, options: HttpOptions): Omit<Request, 'body'> {
  const rawPath = req.getUrl();
  const rawQuery = req.getQuery() ?? '';
  if (rawPath.length + rawQuery.length > options.maxUrlBytes) throw new HttpError('invalid_request', `request URL exceeds ${options.maxUrlBytes} bytes`);
  const headers: Record<string, string> = {};
  for (const name of READ_HEADERS) {
    const value = req.getHeader(name);
    if (value !== '') headers[name] = value;
  }
  const params: string[] = [];
  const parameterCount = parameterCountOf(pattern);
  for (let i = 0; i < parameterCount; i += 1) params.push(decodeComponent(req.getParameter(i) ?? '', 'path parameter'));
  let path: string;
  let query: URLSearchParams;
  try {
    path = decodeURI(rawPath);
    query = new URLSearchParams(rawQuery);
    for (const [key] of query) decodeComponent(key, 'query parameter');
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError('invalid_request', 'the request URL is not valid percent-encoding');
  }
  return { method: method.toUpperCase(), path, query, params, headers, requestId };
}

function decodeComponent(value: string, what: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw new HttpError('invalid_request', `a ${what} is not valid percent-encoding`);
  }
}

function readBody(res: HttpResponse, headers: Readonly<Record<string, string>>, limit: number): Promise<Buffer> {
  const declared = headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    res.onData((chunk, isLast) => {
      if (failed) return;
      size += chunk.byteLength;
      if (size > limit) {
        failed = true;
        reject(tooLarge(limit));
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
  });
}

function writeReply(res: HttpResponse, requestId: string, status: number, reply: Reply): void {
  res.writeStatus(statusLine(status));
  res.writeHeader('x-request-id', requestId);
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.writeHeader(name, value);
  const body = reply.body;
  if (body === undefined || status === 204) {
    res.endWithoutBody();
    return;
  }
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    res.writeHeader('content-type', reply.contentType ?? 'text/plain; charset=utf-8');
    res.end(body);
    return;
  }
  res.writeHeader('content-type', reply.contentType ?? 'application/json');
  res.end(JSON.stringify(body));
}

/** Parses a JSON request body, or answers 400 with what was wrong. */
export function jsonBody<T = unknown>(request: Request): T {
  if (request.body.length === 0) throw new HttpError('invalid_request', 'a JSON request body is required');
  const type = request.headers['content-type'];
  if (type !== undefined && !/^application\/(.+\+)?json\b/i.test(type)) throw new HttpError('invalid_request', `expected content-type application/json, got ${type}`);
  try {
    return JSON.parse(request.body.toString('utf8')) as T;
  } catch (error) {
    throw new HttpError('invalid_request', `the request body is not valid JSON: ${(error as Error).message}`);
  }
}
