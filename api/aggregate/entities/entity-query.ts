/**
 * Resolves the filter of a generic entity query (spec §2.7, §4.4 rules 2–4) from its parameters —
 * fromBlock, toBlock, fromTimestamp, toTimestamp — and refuses what cannot be answered truthfully:
 *
 *   `output = none`, or a block below the retained window     → 409 `output_not_retained` (rebuild / source scan)
 *   explicit block bounds over a gap in coverage              → 409 `range_incomplete` (requested interval + coverage)
 *   both bounds spanning more than `max_block_range`          → 413 `query_too_expensive`
 *
 * The retained window starts at the processor's configured start block: it never produced output
 * below it, so only a rebuild with an earlier start or a source scan can answer there. Timestamp
 * bounds select retained rows only and imply no completeness (the spec asks for block bounds for that).
 */
import { HttpError } from '../../errors.js';
import { rangeCovered, type BlockRange, type ProcessorCoverage } from '../../../store/coverage.js';
import type { ConfiguredProcessor } from '../configured-processors.js';
import { requireRetainedOutput } from '../configured-processors.js';
import { optionalBlockNumber } from '../query-params.js';
import { rangeIncomplete } from '../range-incomplete.js';
import type { EntityFilter } from './entity-page-token.js';

export interface FilterParams {
  readonly fromBlock?: number;
  readonly toBlock?: number;
  readonly fromTimestamp?: number;
  readonly toTimestamp?: number;
}

export function filterParamsOf(query: URLSearchParams): FilterParams {
  const pick = (name: string) => optionalBlockNumber(query, name);
  return { fromBlock: pick('fromBlock'), toBlock: pick('toBlock'), fromTimestamp: pick('fromTimestamp'), toTimestamp: pick('toTimestamp') };
}

export interface RetainedState {
  readonly ranges: readonly BlockRange[];
  /** The processor's configured start block (the first block it applied when none is configured). */
  readonly windowStart: number | null;
}

export function resolveFilter(params: FilterParams, retained: RetainedState, maxBlockRange: number): EntityFilter {
  const { fromBlock, toBlock, fromTimestamp, toTimestamp } = params;
  if (fromTimestamp !== undefined && toTimestamp !== undefined && fromTimestamp > toTimestamp) {
    throw new HttpError('invalid_request', `fromTimestamp ${fromTimestamp} is after toTimestamp ${toTimestamp}`, { fromTimestamp, toTimestamp });
  }
  const explicit = fromBlock !== undefined || toBlock !== undefined;
  const lastCovered = retained.ranges[retained.ranges.length - 1]?.to;
  const from = fromBlock ?? (explicit ? Math.min(retained.windowStart ?? toBlock!, toBlock!) : null);
  const to = toBlock ?? (explicit ? Math.max(lastCovered ?? from!, from!) : null);
  if (from !== null && to !== null && from > to) throw new HttpError('invalid_request', `fromBlock ${from} is after toBlock ${to}`, { fromBlock: from, toBlock: to });
  if (fromBlock !== undefined && toBlock !== undefined && toBlock - fromBlock + 1 > maxBlockRange) {
    throw new HttpError('query_too_expensive', `the range spans ${toBlock - fromBlock + 1} blocks; the configured maximum is ${maxBlockRange}`, {
      requested: { fromBlock, toBlock }, maxBlockRange,
    });
  }
  return { fromBlock: from, toBlock: to, fromTimestamp: fromTimestamp ?? null, toTimestamp: toTimestamp ?? null, explicit };
}

/** The checks every entity read makes before reading rows (see the top of this file). */
export function checkRetained(processor: ConfiguredProcessor, filter: EntityFilter, retained: RetainedState, coverage: () => ProcessorCoverage): void {
  requireRetainedOutput(processor);
  if (!filter.explicit || filter.fromBlock === null || filter.toBlock === null) return;
  const requested = { fromBlock: filter.fromBlock, toBlock: filter.toBlock };
  if (retained.windowStart !== null && requested.fromBlock < retained.windowStart) throw outputNotRetained(processor, requested, retained.windowStart);
  if (!rangeCovered(retained.ranges, requested.fromBlock, requested.toBlock)) throw rangeIncomplete(requested, coverage());
}

export function outputNotRetained(processor: ConfiguredProcessor, requested: { fromBlock: number; toBlock: number }, windowStart: number): HttpError {
  return new HttpError('output_not_retained', `processor '${processor.id}' retains output from block ${windowStart}; blocks ${requested.fromBlock}..${Math.min(requested.toBlock, windowStart - 1)} were never materialized`, {
    processor: processor.id,
    requested,
    retainedFrom: windowStart,
    action: 'rebuild or source scan',
    rebuild: `/admin/v1/processors/${encodeURIComponent(processor.id)}/rebuild`,
    sourceScan: '/admin/v1/materialization-jobs',
  });
}

/** True when a row's metadata passes the filter (rows without a block fail block bounds; without a timestamp, timestamp bounds). */
export function rowMatches(filter: EntityFilter, meta: { blockNumber: number | null; timestamp: number | null }): boolean {
  if (filter.fromBlock !== null || filter.toBlock !== null) {
    if (meta.blockNumber === null) return false;
    if (filter.fromBlock !== null && meta.blockNumber < filter.fromBlock) return false;
    if (filter.toBlock !== null && meta.blockNumber > filter.toBlock) return false;
  }
  if (filter.fromTimestamp !== null || filter.toTimestamp !== null) {
    if (meta.timestamp === null) return false;
    if (filter.fromTimestamp !== null && meta.timestamp < filter.fromTimestamp) return false;
    if (filter.toTimestamp !== null && meta.timestamp > filter.toTimestamp) return false;
  }
  return true;
}
