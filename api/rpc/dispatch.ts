/**
 * JSON-RPC 2.0 framing: a request body (one request or a batch) in, the response bytes out, batches
 * answered in order, notifications (no `id`) answered with nothing. The same function serves the
 * HTTP listener, the WebSocket listener and the conformance replay (`answerRequest`), so every
 * surface answers byte-for-byte alike.
 */
import { METHODS, STATE_METHODS, UNSERVED_METHODS, type RpcResult } from './methods.js';
import type { RpcContext } from './rpc-context.js';
import { INTERNAL_ERROR, INVALID_REQUEST, limitExceeded, METHOD_NOT_FOUND, PARSE_ERROR, RpcError, unsupported } from './rpc-errors.js';

/** Methods a transport answers itself (WebSocket subscriptions); return undefined to fall through. */
export type TransportMethods = (method: string, params: readonly unknown[]) => RpcResult | undefined;

export interface DispatchOptions {
  readonly transport?: TransportMethods;
  /** Called with every error that is the node's fault (logged by the listener). */
  readonly onInternalError?: (error: unknown, method: string) => void;
}

const STATE = new Set<string>(STATE_METHODS);
const UNSERVED = new Set<string>(UNSERVED_METHODS);
const SUBSCRIPTION_METHODS = new Set(['eth_subscribe', 'eth_unsubscribe']);
const HEAD = Buffer.from('{"jsonrpc":"2.0","id":');
const RESULT = Buffer.from(',"result":');
const ERROR = Buffer.from(',"error":');
const CLOSE = Buffer.from('}');

function response(idJson: string, member: Buffer, value: RpcResult): Buffer {
  const valueBytes = typeof value === 'string' ? Buffer.from(value) : value;
  return Buffer.concat([HEAD, Buffer.from(idJson), member, valueBytes, CLOSE]);
}

function errorResponse(idJson: string, error: RpcError): Buffer {
  return response(idJson, ERROR, error.toJson());
}

function call(ctx: RpcContext, method: string, params: readonly unknown[], options: DispatchOptions): RpcResult {
  const handler = METHODS[method];
  if (handler) return handler(params, ctx);
  const fromTransport = options.transport?.(method, params);
  if (fromTransport !== undefined) return fromTransport;
  if (SUBSCRIPTION_METHODS.has(method)) throw unsupported(method, 'websocket_required', 'subscriptions need the WebSocket listener');
  if (STATE.has(method)) throw unsupported(method, 'evm_state_unavailable', 'this node keeps no EVM state');
  if (UNSERVED.has(method)) throw unsupported(method, 'not_served', 'this node serves chain data only');
  throw new RpcError(METHOD_NOT_FOUND, `the method ${method} does not exist/is not available`);
}

function idJsonOf(request: Record<string, unknown>): string | undefined {
  if (!('id' in request)) return undefined;
  const id = request.id;
  if (id === null || typeof id === 'string' || typeof id === 'number') return JSON.stringify(id);
  return 'null';
}

/** Answers one parsed request object; undefined for a notification. */
export function answerRequest(ctx: RpcContext, request: unknown, options: DispatchOptions = {}): Buffer | undefined {
  if (request === null || typeof request !== 'object' || Array.isArray(request)) return errorResponse('null', new RpcError(INVALID_REQUEST, 'invalid request'));
  const object = request as Record<string, unknown>;
  const idJson = idJsonOf(object);
  const id = object.id;
  const badId = id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number';
  if (object.jsonrpc !== '2.0' || typeof object.method !== 'string' || badId) return errorResponse(idJson ?? 'null', new RpcError(INVALID_REQUEST, 'invalid request'));
  const rawParams = object.params;
  let params: readonly unknown[];
  if (rawParams === undefined || rawParams === null) params = [];
  else if (Array.isArray(rawParams)) params = rawParams;
  else return errorResponse(idJson ?? 'null', new RpcError(-32602, 'non-array args'));
  try {
    const result = call(ctx, object.method, params, options);
    return idJson === undefined ? undefined : response(idJson, RESULT, result);
  } catch (error) {
    if (idJson === undefined) return undefined;
    if (error instanceof RpcError) return errorResponse(idJson, error);
    options.onInternalError?.(error, object.method);
    return errorResponse(idJson, new RpcError(INTERNAL_ERROR, `internal error: ${(error as Error).message ?? String(error)}`));
  }
}

/** The parsed object of a JSON-RPC answer (the conformance replay compares these). */
export function answerRequestObject(ctx: RpcContext, request: unknown): unknown {
  const answer = answerRequest(ctx, request);
  return answer === undefined ? undefined : JSON.parse(answer.toString('utf8'));
}

/** Answers a raw body: one request, or a batch in order. Undefined when nothing is to be sent (notifications only). */
export function answerBody(ctx: RpcContext, body: Buffer | string, options: DispatchOptions = {}): Buffer | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return errorResponse('null', new RpcError(PARSE_ERROR, 'parse error'));
  }
  if (!Array.isArray(parsed)) return answerRequest(ctx, parsed, options);
  if (parsed.length === 0) return errorResponse('null', new RpcError(INVALID_REQUEST, 'empty batch'));
  if (parsed.length > ctx.limits.maxBatchRequests) {
    return errorResponse('null', limitExceeded(`batch of ${parsed.length} requests exceeds the limit of ${ctx.limits.maxBatchRequests}`, { limit: ctx.limits.maxBatchRequests, requested: parsed.length }));
  }
  const answers: Buffer[] = [];
  for (const request of parsed) {
    const answer = answerRequest(ctx, request, options);
    if (answer) answers.push(answer);
  }
  if (answers.length === 0) return undefined;
  const parts: Buffer[] = [Buffer.from('[')];
  answers.forEach((answer, i) => { if (i > 0) parts.push(Buffer.from(',')); parts.push(answer); });
  parts.push(Buffer.from(']'));
  return Buffer.concat(parts);
}
