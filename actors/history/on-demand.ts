/**
 * On-demand JSON-RPC history (spec §4.7, §8), the history lane's half: the JSON-RPC lane found a hole (a block below
 * the recorded chain that is not recorded yet) and asks for it. Requests run in the background, beside the lane's
 * jobs, sharing the source's request slots (net/history/slots.ts), and are answered by a message back to the asking
 * rpc worker, so the lane's mailbox never waits on an upstream.
 *
 * A fill proves the hashes first (anchor.ts: a header walk down from the recorded chain, committed as it goes), then
 * fetches the missing blocks top-down in chunks of `[history] chunk_blocks`, each verified by the source exactly as
 * live blocks are (hash, transactions/withdrawals/receipts roots, bloom), linked to the proven hash above it, and
 * recorded with its links and transaction-index entries in one transaction. A block that fails is never recorded:
 * the reply names it and why. Memory is one chunk per fill, whatever the range.
 *
 * Accepts (sent, from `rpc.*`):
 *   `rpc.fill`   {id, from, to}                         blocks from..to (inclusive)
 *   `rpc.locate` {id, kind: 'transaction'|'block', hash} finds the block by the source's locator, then fills it
 * Sends back to the sender: `history.filled` {id, error: {code, message, blockNumber?} | null} (actors/rpc/messages.ts)
 */
import type { ActorContext } from '../../runtime/actor.js';
import { CodedError } from '../../runtime/errors.js';
import { errorFields } from '../../runtime/log.js';
import { HistoryBlockError } from '../../net/history/history-block.js';
import { checkHashChain } from '../../net/history/history-block.js';
import { UpstreamError } from '../../net/rpc/errors.js';
import { getBodyBytes } from '../../store/chain-material.js';
import type { Store } from '../../store/store.js';
import { hexToBytes } from '../../net/eth/hex.js';
import { checkProven, fetchOrdered, lowestCanonical, recordProven, trustedHash } from './anchor.js';
import { sourceOrder, type SourceFailure } from './source-order.js';
import type { HistorySource } from './sources.js';
import type { FillError, FilledMessage, RpcInbox } from '../rpc/messages.js';

export type { FillError, FilledMessage } from '../rpc/messages.js';

export interface OnDemandArgs {
  /** The history source on-demand requests use; null: on-demand history is off. */
  readonly source: string | null;
  /** Blocks one request may fetch (the on-demand log range maximum). */
  readonly maxBlocks: number;
  /** One request's budget (spec §8: one minute). */
  readonly timeoutMs: number;
}

export type FillMessage = {
  readonly type: 'rpc.fill';
  readonly id: number;
  readonly from: number;
  readonly to: number;
};

export type LocateMessage = {
  readonly type: 'rpc.locate';
  readonly id: number;
  readonly kind: 'transaction' | 'block';
  readonly hash: string;
};

export interface OnDemandDeps {
  readonly store: Store;
  readonly sources: ReadonlyMap<string, HistorySource>;
  readonly shutdown: AbortSignal;
  readonly chunkBlocks: number;
  readonly args: OnDemandArgs;
  /** Hears each source that could not serve a range (the next one was asked). */
  readonly skipped?: (failure: SourceFailure) => void;
}

/** Starts the request in the background and answers `from` when it is done (never throws into the mailbox). */
export function startOnDemand(ctx: ActorContext<unknown>, deps: OnDemandDeps, message: FillMessage | LocateMessage, from: string): void {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new Error('on-demand history deadline')), deps.args.timeoutMs);
  const signal = AbortSignal.any([deps.shutdown, timeout.signal]);
  // The answer leaves at the deadline even while an upstream request hangs (that request keeps its slot until its
  // own timeout; nothing it brings is recorded after the deadline: every step checks the signal).
  const deadline = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  const work = Promise.race([message.type === 'rpc.fill' ? fill(deps, message.from, message.to, signal) : locate(deps, message, signal), deadline]);
  void work.then(() => null, (error: unknown) => failureOf(error, deps.args.timeoutMs, signal)).then(async (error) => {
    clearTimeout(timer);
    if (deps.shutdown.aborted) return;
    if (error) ctx.log.info('on-demand history request failed', { request: message.type, reason: error.message, ...(error.blockNumber !== undefined ? { blockNumber: error.blockNumber } : {}) });
    const reply: FilledMessage = { type: 'history.filled', id: message.id, error };
    await ctx.send<RpcInbox>(from, reply);
  }).catch((error: unknown) => ctx.log.warn('could not answer an on-demand history request', errorFields(error)));
}

function failureOf(error: unknown, timeoutMs: number, signal: AbortSignal): FillError {
  if (error instanceof HistoryBlockError) return { code: 'source_unavailable', message: error.message, ...(error.blockNumber >= 0 ? { blockNumber: error.blockNumber } : {}) };
  if (error instanceof CodedError) return { code: error.code as FillError['code'], message: error.message };
  if (error instanceof UpstreamError) return { code: 'source_unavailable', message: error.message };
  if (signal.aborted) return { code: 'source_unavailable', message: `on-demand history did not finish within ${timeoutMs / 1000} s` };
  return { code: 'source_unavailable', message: `on-demand history failed: ${(error as Error).message}` };
}

/** The sources a request tries per range: on_demand_source first, then the others in configured order (source-order.ts). */
function orderOf(deps: OnDemandDeps): HistorySource[] {
  const order = deps.args.source === null ? [] : sourceOrder(deps.sources, deps.args.source);
  if (order.length === 0) throw new CodedError('unsupported_capability', 'on-demand history is off: no history source is configured for it ([[sources.history]], [history] on_demand)');
  return order;
}

/** Whether block `number` is proven and its material recorded (nothing to fetch). */
function recorded(store: Store, number: number): boolean {
  const hash = trustedHash(store, number);
  return hash !== null && getBodyBytes(store, hexToBytes(hash)) !== undefined;
}

/** Records blocks from..to below the recorded chain that are not recorded yet, verified and proven. */
export async function fill(deps: OnDemandDeps, from: number, to: number, signal: AbortSignal): Promise<void> {
  const { store } = deps;
  const order = orderOf(deps);
  const lowest = lowestCanonical(store);
  if (!lowest) throw new CodedError('range_incomplete', 'the node has recorded no block yet; history is anchored to the recorded chain');
  const top = Math.min(to, lowest.number - 1);
  if (from > top) return;
  if (top - from + 1 > deps.args.maxBlocks) {
    throw new CodedError('query_too_expensive', `on-demand history covers ${top - from + 1} blocks; this node fetches at most ${deps.args.maxBlocks} per request ([history] on_demand_max_blocks)`);
  }
  let high = top;
  while (high >= from) {
    while (high >= from && recorded(store, high)) high -= 1;
    if (high < from) return;
    let low = high;
    while (low > from && high - low + 1 < deps.chunkBlocks && !recorded(store, low - 1)) low -= 1;
    signal.throwIfAborted();
    const blocks = await fetchOrdered(store, order, low, high, signal, deps.skipped);
    signal.throwIfAborted();
    checkHashChain(blocks, low, trustedHash(store, low - 1), null);
    checkProven(store, blocks);
    await recordProven(store, blocks, order.some((source) => source.recordsNeeded));
    high = low - 1;
  }
}

async function locate(deps: OnDemandDeps, message: LocateMessage, signal: AbortSignal): Promise<void> {
  // Only on_demand_source has to know hashes: it is asked for the block, and the block is filled from any source.
  const source = orderOf(deps)[0]!;
  if (!source.transactionBlock || !source.blockNumberOf) throw new CodedError('unsupported_capability', `history source '${source.id}' has no locator (kind ${source.kind})`);
  const number = message.kind === 'transaction' ? await source.transactionBlock(message.hash) : await source.blockNumberOf(message.hash);
  if (number === null) return;
  await fill(deps, number, number, signal);
}
