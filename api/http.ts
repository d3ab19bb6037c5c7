/**
 * Request handling on uWebSockets.js: everything a handler needs is read from the request
 * synchronously (uWS invalidates it after the first await), bodies are read with a size limit,
 * every response carries `x-request-id`, and every error leaves in the spec's error shape.
 */
import { STATUS_CODES } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { z } from 'zod';
import { errorBody, HttpError } from './errors.js';
import { CodedError } from '../runtime/errors.js';
import type { Logger } from '../runtime/log.js';
import type { RequestFaults } from './request-faults.js';

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
  /**
   * Called once the reply was handed to uWS (which copies whatever the socket does not take at once)
   * or dropped because the client went away: the handler may reuse the body's memory from then on.
   */
  readonly written?: () => void;
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
  /** Where a request's unexpected exception is logged and counted (the request boundary). */
  readonly faults: RequestFaults;
}

/**
 * Headers a handler may read; uWS can only hand them out before the first await. Each is a lookup
 * across the native boundary on every request, so only those a handler reads are copied (the SSE
 * route reads its own from uWS); `content-type` matters only to a body.
 */
const READ_HEADERS = ['authorization', 'content-length', 'x-node-consumer-credential'];
const BODY_HEADERS = [...READ_HEADERS, 'content-type'];

const STATUS_LINES = new Map<number, string>();

export function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    STATUS_LINES.set(status, line);
  }
  return line;
}

/**
 * Request ids are RFC 9562 version-8 UUIDs: 74 random bits drawn once per worker, then a 48-bit
 * counter. Unique across the listener instances and restarts of a node (the random part) and
 * within one worker (the counter), at the cost of an increment instead of a random draw per request.
 */
const REQUEST_ID_PREFIX = requestIdPrefix(randomBytes(10));
let requestCounter = 0;

function requestIdPrefix(random: Buffer): string {
  const hex = random.toString('hex');
  // xxxxxxxx-xxxx-8xxx-Vxxx- : version nibble 8, variant bits 10.
  const variant = ((parseInt(hex[15]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(12, 15)}-${variant}${hex.slice(16, 19)}-`;
}

export function newRequestId(): string {
  requestCounter = requestCounter >= 0xffff_ffff_ffff ? 1 : requestCounter + 1;
  return REQUEST_ID_PREFIX + requestCounter.toString(16).padStart(12, '0');
}

/** Registers `handler` for `method pattern`, with body reading, error mapping and request ids. */
export function route(app: TemplatedApp, method: Method, pattern: string, handler: Handler, options: HttpOptions): void {
  const register = app[method === 'delete' ? 'del' : method] as (pattern: string, handler: (res: HttpResponse, req: HttpRequest) => void) => TemplatedApp;
  const parameterCount = (pattern.match(/\/:/g) ?? []).length;
  register.call(app, pattern, (res, req) => serve(res, req, method, pattern, parameterCount, handler, options));
}

/** Answers every request no route claims: 405 when the path exists with another method, else 404. */
export function fallback(app: TemplatedApp, knownPaths: (path: string) => readonly string[], options: HttpOptions): void {
  const handler: Handler = (request) => {
    const allowed = knownPaths(request.path);
    if (allowed.length > 0) throw new HttpError('method_not_allowed', `${request.method} is not allowed on ${request.path}`, { allowed }, 405, { allow: allowed.join(', ') });
    throw new HttpError('not_found', `no route for ${request.method} ${request.path}`);
  };
  app.any('/*', (res, req) => {
    serve(res, req, req.getCaseSensitiveMethod().toLowerCase() as Method, '(unmatched)', 0, handler, options);
  });
}

/**
 * One request. A handler that answers synchronously is answered inside uWS's own callback (already
 * corked, nothing can abort it); only a request that reads a body or awaits registers `onAborted`,
 * counts as in flight, and corks its late reply.
 */
class Exchange {
  private readonly started = performance.now();
  private aborted = false;
  private done = false;
  private pending = false;

  constructor(
    private readonly res: HttpResponse,
    private readonly method: Method,
    private readonly pattern: string,
    readonly requestId: string,
    private readonly options: HttpOptions,
  ) {}

  /** The reply will come after this turn: watch for the client going away, hold up a graceful drain. */
  goAsync(): void {
    if (this.pending) return;
    this.pending = true;
    this.options.inFlight.count += 1;
    this.res.onAborted(() => {
      this.aborted = true;
      if (!this.done) this.options.inFlight.count -= 1;
    });
  }

  finish(reply: Reply): void {
    if (this.aborted || this.done) {
      reply.written?.();
      return;
    }
    this.done = true;
    const status = reply.status ?? 200;
    if (this.pending) this.options.inFlight.count -= 1;
    try {
      if (this.pending) this.res.cork(() => writeReply(this.res, this.requestId, status, reply));
      else writeReply(this.res, this.requestId, status, reply);
    } catch (error) {
      // Part of the answer may be on the wire: the only honest end is to close this connection.
      this.options.faults.record('api', this.requestId, error, { method: this.method, route: this.pattern, while: 'writing the reply' });
      this.res.close();
      return;
    } finally {
      reply.written?.();
    }
    this.options.onResponse?.(this.pattern, status, (performance.now() - this.started) / 1000);
  }

  fail(error: unknown): void {
    const { status, body, headers } = errorBody(error, this.requestId);
    if (!(error instanceof CodedError)) this.options.faults.record('api', this.requestId, error, { method: this.method, route: this.pattern });
    this.finish({ status, body, headers });
  }

  run(handler: Handler, request: Request): void {
    try {
      const result = handler(request);
      if (result instanceof Promise) {
        this.goAsync();
        result.then((reply) => this.finish(reply), (error: unknown) => this.fail(error));
      } else {
        this.finish(result);
      }
    } catch (error) {
      this.fail(error);
    }
  }
}

function serve(res: HttpResponse, req: HttpRequest, method: Method, pattern: string, parameterCount: number, handler: Handler, options: HttpOptions): void {
  const exchange = new Exchange(res, method, pattern, newRequestId(), options);
  try {
    accept(res, req, method, parameterCount, handler, options, exchange);
  } catch (error) {
    // The request boundary: nothing a request brings may escape into uWS and take the worker down.
    exchange.fail(error);
  }
}

function accept(res: HttpResponse, req: HttpRequest, method: Method, parameterCount: number, handler: Handler, options: HttpOptions, exchange: Exchange): void {
  let request: IncomingRequest;
  try {
    request = readRequest(req, method, exchange.requestId, parameterCount, options);
  } catch (error) {
    exchange.fail(error);
    return;
  }
  if (method === 'get' || method === 'head' || method === 'delete' || method === 'options') {
    const declared = request.headers['content-length'];
    if (declared !== undefined && Number(declared) > options.maxBodyBytes) return exchange.fail(tooLarge(options.maxBodyBytes));
    exchange.run(handler, request);
    return;
  }
  exchange.goAsync();
  readBody(res, request.headers, options.maxBodyBytes).then(
    (body) => {
      request.body = body;
      exchange.run(handler, request);
    },
    (error: unknown) => exchange.fail(error),
  );
}

const EMPTY = Buffer.alloc(0);

function tooLarge(limit: number): HttpError {
  return new HttpError('payload_too_large', `request body exceeds the limit of ${limit} bytes`, { limitBytes: limit });
}

const NO_QUERY = '';
const METHOD_NAMES: Readonly<Partial<Record<string, string>>> = { get: 'GET', post: 'POST', put: 'PUT', delete: 'DELETE', patch: 'PATCH', head: 'HEAD', options: 'OPTIONS' };

/**
 * A request as handlers see it. The query string is parsed on first use: most routes take none, and
 * a `URLSearchParams` per request is measurable at tens of thousands of requests per second. A query
 * with percent-escapes is parsed (and checked) at once, so a bad one fails before the handler runs.
 */
class IncomingRequest implements Request {
  body: Buffer = EMPTY;
  private parsedQuery: URLSearchParams | null = null;

  constructor(
    readonly method: string,
    readonly path: string,
    private readonly rawQuery: string,
    readonly params: readonly string[],
    readonly headers: Readonly<Record<string, string>>,
    readonly requestId: string,
  ) {}

  get query(): URLSearchParams {
    this.parsedQuery ??= new URLSearchParams(this.rawQuery);
    return this.parsedQuery;
  }
}

function readRequest(req: HttpRequest, method: Method, requestId: string, parameterCount: number, options: HttpOptions): IncomingRequest {
  const rawPath = req.getUrl();
  const rawQuery = req.getQuery() ?? NO_QUERY;
  if (rawPath.length + rawQuery.length > options.maxUrlBytes) throw new HttpError('invalid_request', `request URL exceeds ${options.maxUrlBytes} bytes`);
  const headers: Record<string, string> = {};
  for (const name of method === 'get' || method === 'head' ? READ_HEADERS : BODY_HEADERS) {
    const value = req.getHeader(name);
    if (value !== '') headers[name] = value;
  }
  const params: string[] = [];
  for (let i = 0; i < parameterCount; i += 1) {
    const raw = req.getParameter(i) ?? '';
    params.push(boundedParameter(raw.includes('%') ? decodeComponent(raw, 'path parameter') : raw));
  }
  let path = rawPath;
  if (rawPath.includes('%')) {
    try {
      path = decodeURI(rawPath);
    } catch {
      throw new HttpError('invalid_request', 'the request URL is not valid percent-encoding');
    }
  }
  const request = new IncomingRequest(METHOD_NAMES[method] ?? method.toUpperCase(), path, rawQuery, params, headers, requestId);
  if (rawQuery.includes('%')) for (const [key] of request.query) decodeComponent(key, 'query parameter');
  return request;
}

/**
 * Bytes a path parameter may have. Every identifier a path names (instance, consumer, job, subscription, savepoint
 * ids: at most 128 characters; entity keys: at most 256 hex digits) fits; a longer one names nothing, and is
 * refused here before any route looks it up (LMDB refuses keys over ~2 KB with an exception, not a miss).
 */
export const MAX_PATH_PARAMETER_BYTES = 512;

function boundedParameter(value: string): string {
  const bytes = Buffer.byteLength(value);
  if (bytes > MAX_PATH_PARAMETER_BYTES) {
    throw new HttpError('not_found', `a path parameter of ${bytes} bytes names nothing on this node: its identifiers are at most ${MAX_PATH_PARAMETER_BYTES} bytes`, { parameterBytes: bytes, maxBytes: MAX_PATH_PARAMETER_BYTES });
  }
  return value;
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
  if (reply.headers) for (const name in reply.headers) res.writeHeader(name, reply.headers[name]!);
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

/** A `content-type` naming JSON: `application/json` or a `+json` type, parameters such as charset allowed; `also` adds other subtypes. */
export function isJsonMediaType(type: string, also: readonly string[] = []): boolean {
  const subtype = /^\s*application\/([\w.+-]+)\s*(;|$)/i.exec(type)?.[1]?.toLowerCase();
  return subtype !== undefined && (subtype === 'json' || subtype.endsWith('+json') || also.includes(subtype));
}

/**
 * 415 unless the request declares a JSON body (`application/json` or a `+json` type). Every JSON
 * route asks this even of an empty body: a `text/plain` or untyped POST is what any web page may
 * send cross-site without a preflight, and must not create or change anything.
 */
export function requireJsonType(request: Request): void {
  const type = request.headers['content-type'];
  if (type === undefined || !isJsonMediaType(type)) {
    throw new HttpError('unsupported_media_type', `send the request body as content-type application/json${type === undefined ? '' : `, not ${type}`}`, { contentType: type ?? null });
  }
}

/** Parses a JSON request body: 415 when it is not declared JSON, 400 with what was wrong otherwise. */
export function jsonBody<T = unknown>(request: Request): T {
  requireJsonType(request);
  if (request.body.length === 0) throw new HttpError('invalid_request', 'a JSON request body is required');
  try {
    return JSON.parse(request.body.toString('utf8')) as T;
  } catch (error) {
    throw new HttpError('invalid_request', `the request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** The request's JSON body validated by `schema` (jsonBody first): 400 `invalid_request` listing every problem otherwise. */
export function bodyWith<T>(schema: z.ZodType<T>, request: Request): T {
  const result = schema.safeParse(jsonBody(request));
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({ field: issue.path.join('.') || '(body)', problem: issue.message }));
  throw new HttpError('invalid_request', `the request body is not valid: ${issues.map((i) => `${i.field}: ${i.problem}`).join('; ')}`, { issues });
}
