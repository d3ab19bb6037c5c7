/**
 * Which blob processor a typed route serves: canonical paths name it
 * (`/v1/processors/{id}/query/blobs/…`), the `/v1/q/blobs/…` alias serves the one configured
 * blobs instance. Also opens its entity table, refusing `output = none` first.
 */
import { HttpError } from '../../errors.js';
import type { Request } from '../../http.js';
import type { BinaryTable } from '../../../store/env.js';
import type { AggregateContext } from '../aggregate-context.js';
import { kindInfo, requireRetainedOutput, type ConfiguredProcessor } from '../configured-processors.js';
import { coveredRanges, processorTables } from '../processor-reader.js';
import type { BlockRange } from '../../../store/coverage.js';

export const BLOBS_EXTENSION = 'blobs';

export interface BlobQueryTarget {
  readonly processor: ConfiguredProcessor;
  /** Path parameters after the processor id. */
  readonly params: readonly string[];
}

/** Resolves the processor of a request: by the first path parameter, or the fixed alias processor. */
export type TargetResolver = (request: Request) => BlobQueryTarget;

export function canonicalTarget(context: AggregateContext): TargetResolver {
  return (request) => {
    const processor = context.processors.byId(request.params[0] ?? '');
    if (!kindInfo(processor).queryExtensions.includes(BLOBS_EXTENSION)) {
      throw new HttpError('not_found', `processor '${processor.id}' has no '${BLOBS_EXTENSION}' query extension`, { processor: processor.id });
    }
    return { processor, params: request.params.slice(1) };
  };
}

export function aliasTarget(processor: ConfiguredProcessor): TargetResolver {
  return (request) => ({ processor, params: request.params });
}

export interface RetainedOutput {
  /** Null while the processor's lane has not created its tables: nothing is covered yet. */
  readonly entities: BinaryTable | null;
  readonly ranges: readonly BlockRange[];
}

/** The processor's entity table and coverage; `output_not_retained` for `output = none`. */
export function retainedOutput(context: AggregateContext, processor: ConfiguredProcessor): RetainedOutput {
  requireRetainedOutput(processor);
  const tables = processorTables(context.store, processor.instance);
  return { entities: tables?.entities ?? null, ranges: coveredRanges(tables) };
}
