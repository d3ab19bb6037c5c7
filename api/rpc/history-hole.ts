/**
 * On-demand JSON-RPC history, the rpc lane's half (spec §4.7, §8). Methods stay synchronous reads over the store:
 * when one finds a hole — blocks below the recorded chain that are not recorded yet, or a hash only the history
 * source's locator can place — it throws a `HistoryHole`. Where on-demand history is configured, the listener
 * collects the holes of a request body, asks the history lane to fill them (verified, recorded), and answers the body
 * again once they are recorded; the second pass answers each hole that is still there with the fill's failure, or
 * with the hole's own answer (range_incomplete, or null for an unknown hash). Without on-demand history a hole is
 * answered at once with its own answer, as before.
 */
import type { RpcResult } from './methods.js';
import { RESOURCE_UNAVAILABLE, RpcError } from './rpc-errors.js';

/** What to ask the history lane for. */
export type HoleRequest =
  | { readonly kind: 'range'; readonly from: number; readonly to: number }
  | { readonly kind: 'transaction' | 'block'; readonly hash: string };

export class HistoryHole extends RpcError {
  /**
   * `fallback`: the answer without history — an RpcError's data (range_incomplete) when `result` is undefined,
   * else the result itself (`null` for a hash nobody can place).
   */
  constructor(readonly request: HoleRequest, message: string, details: Readonly<Record<string, unknown>>, readonly result?: RpcResult) {
    super(RESOURCE_UNAVAILABLE, message, { code: 'range_incomplete', ...details });
  }
}

/** A key that identifies the same request (a body asking twice for one block asks the history lane once). */
export function holeKey(request: HoleRequest): string {
  return request.kind === 'range' ? `range:${request.from}-${request.to}` : `${request.kind}:${request.hash.toLowerCase()}`;
}

/** Fills holes: resolves with null when every hole is filled, or with the error the second pass answers them with. */
export type HistoryFiller = (holes: readonly HoleRequest[]) => Promise<RpcError | null>;
