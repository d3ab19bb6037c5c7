/**
 * History sources tried in configured order, per range (issue 31): every piece of work (materialization job, backfill
 * subscription, cold backfill, rebuild, on-demand JSON-RPC history) starts each range with its source (default the
 * first `[[sources.history]]`) and goes on with the others in configured order — except a job or subscription whose
 * request named its source, which asks that one only. A
 * source is skipped for a range when its range says it cannot serve it (`outOfRange`: kind era past the merge), or
 * when it fails to serve it proven (peers that do not hold it, an upstream that errs, material that does not verify
 * or link); the next one is asked. A range no source serves fails naming the block and each source's reason, so it
 * is never marked complete.
 *
 * Ranges only ever end at a source's limit: `outOfRange(from, to)` is assumed monotone in `to` (a source that cannot
 * serve from..to cannot serve from..to+1), which holds for the sources' only limit, Era1's end at the merge.
 */
import { CodedError } from '../../runtime/errors.js';
import { HistoryBlockError } from '../../net/history/history-block.js';
import type { HistorySource } from './sources.js';

/** What order needs of a source: its id and, when it has one, its range limit. */
export type RangedSource = Pick<HistorySource, 'id' | 'outOfRange'>;

/**
 * `first` (when configured), then every other source in configured order (a Map keeps insertion order); with
 * `only`, `first` alone (a request that named its source).
 */
export function sourceOrder<S extends RangedSource>(sources: ReadonlyMap<string, S>, first: string | null, only = false): S[] {
  const head = first === null ? undefined : sources.get(first);
  if (only) return head ? [head] : [];
  return head ? [head, ...[...sources.values()].filter((source) => source !== head)] : [...sources.values()];
}

/** The highest block c of from..to such that `source` may serve from..c, or from − 1 when it cannot serve `from`. */
export function servableEnd(source: RangedSource, from: number, to: number): number {
  if (!source.outOfRange || source.outOfRange(from, to) === null) return to;
  let low = from - 1;
  let high = to;
  // Invariant: from..low is servable (or low = from − 1), from..high is not.
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (source.outOfRange(from, mid) === null) low = mid;
    else high = mid;
  }
  return low;
}

/** A part of a range and the sources, in order, whose range holds it; `refused` says why each other one cannot. */
export interface RangePiece<S extends RangedSource> {
  readonly from: number;
  readonly to: number;
  readonly sources: readonly S[];
  readonly refused: ReadonlyArray<{ readonly source: string; readonly reason: string }>;
}

/** from..to cut where a source's range ends, each piece with the sources of `order` that may serve it, ascending. */
export function rangePieces<S extends RangedSource>(order: readonly S[], from: number, to: number): Array<RangePiece<S>> {
  const pieces: Array<RangePiece<S>> = [];
  for (let start = from; start <= to;) {
    const ends = order.map((source) => servableEnd(source, start, to));
    const able = order.filter((_, i) => ends[i]! >= start);
    const end = able.length === 0 ? to : Math.min(...ends.filter((end) => end >= start));
    const refused = order.flatMap((source, i) => (ends[i]! >= start ? [] : [{ source: source.id, reason: source.outOfRange?.(start, end) ?? 'out of its range' }]));
    pieces.push({ from: start, to: end, sources: able, refused });
    start = end + 1;
  }
  return pieces;
}

/**
 * Refuses, when a request is made, a range part of which no source of `order` can ever serve (422 naming the
 * blocks and each source's reason), rather than failing at its first chunk there.
 */
export function checkOrderRange(order: readonly RangedSource[], from: number, to: number): void {
  const hole = rangePieces(order, from, to).find((piece) => piece.sources.length === 0);
  if (!hole) return;
  const reasons = hole.refused.map((r) => r.reason).join('; ');
  throw new CodedError('unsupported_capability', order.length === 1 ? reasons : `no history source can serve blocks ${hole.from}-${hole.to}: ${reasons}`,
    { fromBlock: from, toBlock: to, rule: 'history_source_range', sources: order.map((source) => source.id) });
}

/** A source that could not serve a range, and why. */
export interface SourceFailure {
  readonly source: string;
  readonly blockNumber: number | null;
  readonly reason: string;
}

/**
 * Runs `serve` for a piece with each of its sources in turn until one answers; `skipped` hears each source that
 * failed (logged by the caller). Stops at once when `signal` is aborted. Every source failing is a HistoryBlockError
 * naming the first block a source named (else the piece's first) and each source's reason.
 */
export async function fromFirstThatServes<S extends RangedSource, T>(
  piece: RangePiece<S>, serve: (source: S) => Promise<T>, signal: AbortSignal, skipped?: (failure: SourceFailure) => void,
): Promise<T> {
  const failures: SourceFailure[] = piece.refused.map((r) => ({ source: r.source, blockNumber: null, reason: r.reason }));
  for (const source of piece.sources) {
    try {
      return await serve(source);
    } catch (error) {
      // One source and nothing else to try: its error as it was (a single-source node fails exactly as before).
      if (signal.aborted || (piece.sources.length === 1 && failures.length === 0)) throw error;
      const failure: SourceFailure = error instanceof HistoryBlockError
        ? { source: source.id, blockNumber: error.blockNumber, reason: error.message }
        : { source: source.id, blockNumber: null, reason: (error as Error).message };
      failures.push(failure);
      skipped?.(failure);
    }
  }
  const block = failures.find((f) => f.blockNumber !== null)?.blockNumber ?? piece.from;
  throw new HistoryBlockError(block, `no history source served blocks ${piece.from}-${piece.to}: ${failures.map((f) => `'${f.source}': ${f.reason}`).join('; ')}`);
}

