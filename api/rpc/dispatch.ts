/**
 * JSON-RPC 2.0 framing: a request body (one request or a batch) in, the response bytes out, batches
 * answered in order, notifications (no `id`) answered with nothing. The same function serves the
 * HTTP listener, the WebSocket listener and the conformance replay (`answerRequest`), so every
 * surface answers byte-for-byte alike.
 */
import { METHODS, STATE_METHODS, UNSERVED_METHODS, type RpcResult } from './methods.js';
import type { RpcContext } from './rpc-context.js';
import { HistoryHole, type HoleRequest } from './history-hole.js';
import { internalError, INVALID_REQUEST, limitExceeded, METHOD_NOT_FOUND, PARSE_ERROR, RpcError, unsupported } from './rpc-errors.js';

/** Methods a transport answers itself (WebSocket subscriptions); return undefined to fall through. */
export type TransportMethods = (method: string, params: readonly unknown[]) => RpcResult | undefined;

export interface DispatchOptions {
  readonly transport?: TransportMethods;
  /**
   * Called with every error that is the node's fault; returns the request id the listener logged
   * it under, which the answer carries (the error's own text stays in the log, never in the answer).
   */
  readonly onInternalError?: (error: unknown, method: string) => string;
  /** First pass with on-demand history: the holes requests found are collected here (api/rpc/history-hole.ts). */
  readonly holes?: HoleRequest[];
  /** Second pass: a hole still there is answered with this failure of the fill, when it failed. */
  readonly holeFailure?: RpcError | null;
}

const STATE = new Set<string>(STATE_METHODS);
const UNSERVED = new Set<string>(UNSERVED_METHODS);
const SUBSCRIPTION_METHODS = new Set(['eth_subscribe', 'eth_unsubscribe']);
const CLOSE = Buffer.from('}');

/**
 * An answer as the pieces it is made of, so a listener can write a large pre-rendered result (a
 * full block, a block's receipts) straight from the cached bytes instead of copying it into one
 * buffer per request: the envelope's head, the result or error, the closing brace. `answerBody`
 * joins them for callers that need one buffer.
 */
export type AnswerParts = readonly Buffer[];

/** A JSON `id` seen before: most clients send the same few ids over and over. */
const HEADS = new Map<string, { result: Buffer; error: Buffer }>();

function headsOf(idJson: string): { result: Buffer; error: Buffer } {
  let heads = HEADS.get(idJson);
  if (heads === undefined) {
    heads = { result: Buffer.from(`{"jsonrpc":"2.0","id":${idJson},"result":`), error: Buffer.from(`{"jsonrpc":"2.0","id":${idJson},"error":`) };
    // Ids are chosen by clients: keep only short ones, and never more than a bounded number.
    if (idJson.length <= 24 && HEADS.size < 1024) HEADS.set(idJson, heads);
  }
  return heads;
}

function response(idJson: string, kind: 'result' | 'error', value: RpcResult): AnswerParts {
  return [headsOf(idJson)[kind], typeof value === 'string' ? Buffer.from(value) : value, CLOSE];
}

function errorResponse(idJson: string, error: RpcError): AnswerParts {
  return response(idJson, 'error', error.toJson());
}

/** The parts of an answer as one buffer. */
export function joinParts(parts: AnswerParts): Buffer {
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts as Buffer[]);
}

function call(ctx: RpcContext, method: string, params: readonly unknown[], options: DispatchOptions): RpcResult {
  const handler = METHODS.get(method);
  if (handler !== undefined) return handler(params, ctx);
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
  const parts = answerRequestParts(ctx, request, options);
  return parts === undefined ? undefined : joinParts(parts);
}

function answerRequestParts(ctx: RpcContext, request: unknown, options: DispatchOptions): AnswerParts | undefined {
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
    return idJson === undefined ? undefined : response(idJson, 'result', result);
  } catch (error) {
    if (error instanceof HistoryHole) {
      if (options.holes) {
        options.holes.push(error.request);
        return idJson === undefined ? undefined : errorResponse(idJson, error);
      }
      if (idJson === undefined) return undefined;
      if (options.holeFailure) return errorResponse(idJson, options.holeFailure);
      return error.result !== undefined ? response(idJson, 'result', error.result) : errorResponse(idJson, error);
    }
    if (idJson === undefined) return undefined;
    if (error instanceof RpcError) return errorResponse(idJson, error);
    return errorResponse(idJson, internalError(options.onInternalError?.(error, object.method)));
  }
}

/** The parsed object of a JSON-RPC answer (the conformance replay compares these). */
export function answerRequestObject(ctx: RpcContext, request: unknown): unknown {
  const answer = answerRequest(ctx, request);
  return answer === undefined ? undefined : JSON.parse(answer.toString('utf8'));
}

/** Answers a raw body: one request, or a batch in order. Undefined when nothing is to be sent (notifications only). */
export function answerBody(ctx: RpcContext, body: Buffer | string, options: DispatchOptions = {}): Buffer | undefined {
  const parts = answerBodyParts(ctx, body, options);
  return parts === undefined ? undefined : joinParts(parts);
}

/** `answerBody` as parts (see AnswerParts); a batch comes as one part. */
export function answerBodyParts(ctx: RpcContext, body: Buffer | string, options: DispatchOptions = {}): AnswerParts | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return errorResponse('null', new RpcError(PARSE_ERROR, 'parse error'));
  }
  if (!Array.isArray(parsed)) return answerRequestParts(ctx, parsed, options);
  if (parsed.length === 0) return errorResponse('null', new RpcError(INVALID_REQUEST, 'empty batch'));
  if (parsed.length > ctx.limits.maxBatchRequests) {
    return errorResponse('null', limitExceeded(`batch of ${parsed.length} requests exceeds the limit of ${ctx.limits.maxBatchRequests}`, { limit: ctx.limits.maxBatchRequests, requested: parsed.length }));
  }
  const parts: Buffer[] = [];
  for (const request of parsed) {
    const answer = answerRequestParts(ctx, request, options);
    if (!answer) continue;
    parts.push(parts.length === 0 ? Buffer.from('[') : Buffer.from(','), ...answer);
  }
  if (parts.length === 0) return undefined;
  parts.push(Buffer.from(']'));
  return [Buffer.concat(parts)];
}
