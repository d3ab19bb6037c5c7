/**
 * JSON-RPC errors (spec §7.3): the standard JSON-RPC 2.0 codes, and the node's codes in the server
 * range -32000..-32099 (aligned with EIP-1474) for what the spec's HTTP errors call
 * `unsupported_capability`, `range_incomplete` / `finality_unavailable` and `query_too_expensive`.
 * `data.code` names the spec error so a client can tell them apart without parsing messages.
 *
 *   -32700  parse error           the body is not JSON
 *   -32600  invalid request       not a JSON-RPC 2.0 request object, or an empty batch
 *   -32601  method not found      a method this node does not know
 *   -32602  invalid params        wrong parameter count, type or value (geth's messages)
 *   -32603  internal error        the node failed; never a substitute answer (data.code internal, data.requestId
 *                                 names the log line with the details)
 *   -32002  resource unavailable  data.code range_incomplete (block not retained, receipts not recorded)
 *                                 or finality_unavailable (safe/finalized before finality reached the chain)
 *                                 or source_unavailable (on-demand history: the history source failed, timed out,
 *                                 or served a block that does not verify — data.block names it; never served)
 *   -32004  method not supported  data.code unsupported_capability (state methods: data.reason evm_state_unavailable;
 *                                 subscriptions over HTTP: data.reason websocket_required)
 *   -32005  limit exceeded        data.code query_too_expensive (batch size, eth_getLogs block range or result count)
 */
import { object } from './json-text.js';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
export const RESOURCE_UNAVAILABLE = -32002;
export const METHOD_NOT_SUPPORTED = -32004;
export const LIMIT_EXCEEDED = -32005;

export type SpecErrorCode = 'unsupported_capability' | 'range_incomplete' | 'finality_unavailable' | 'query_too_expensive' | 'source_unavailable';

export class RpcError extends Error {
  override readonly name = 'RpcError';
  constructor(readonly code: number, message: string, readonly data?: Readonly<Record<string, unknown>>) {
    super(message);
  }

  /** The `error` member's JSON: code, message, data (in that order, as execution clients write it). */
  toJson(): string {
    return object([
      ['code', String(this.code)],
      ['message', JSON.stringify(this.message)],
      ['data', this.data === undefined ? undefined : JSON.stringify(this.data)],
    ]);
  }
}

/** -32603 for a failure inside the node: no internal text, only the request id its log line carries. */
export function internalError(requestId: string | undefined): RpcError {
  return new RpcError(INTERNAL_ERROR, 'internal error', requestId === undefined ? { code: 'internal' } : { code: 'internal', requestId });
}

export const invalidParams = (message: string): RpcError => new RpcError(INVALID_PARAMS, message);

export function unsupported(method: string, reason: string, message: string): RpcError {
  return new RpcError(METHOD_NOT_SUPPORTED, `${method} is not supported: ${message}`, { code: 'unsupported_capability', reason });
}

export function rangeIncomplete(message: string, details: Readonly<Record<string, unknown>> = {}): RpcError {
  return new RpcError(RESOURCE_UNAVAILABLE, message, { code: 'range_incomplete', ...details });
}

export function finalityUnavailable(message: string): RpcError {
  return new RpcError(RESOURCE_UNAVAILABLE, message, { code: 'finality_unavailable' });
}

export function limitExceeded(message: string, details: Readonly<Record<string, unknown>>): RpcError {
  return new RpcError(LIMIT_EXCEEDED, message, { code: 'query_too_expensive', ...details });
}

export function sourceUnavailable(message: string, details: Readonly<Record<string, unknown>> = {}): RpcError {
  return new RpcError(RESOURCE_UNAVAILABLE, message, { code: 'source_unavailable', ...details });
}
