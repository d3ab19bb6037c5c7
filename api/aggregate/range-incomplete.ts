/** 409 `range_incomplete` (spec §7.2 rule 1): the requested interval and the processor's coverage, never an empty success. */
import { HttpError } from '../errors.js';
import type { ProcessorCoverage } from '../../store/coverage.js';
import type { BlockInterval } from './processor-reader.js';

export function rangeIncomplete(requested: BlockInterval, coverage: ProcessorCoverage): HttpError {
  const span = requested.fromBlock === requested.toBlock ? `block ${requested.fromBlock} is` : `blocks ${requested.fromBlock}..${requested.toBlock} are`;
  return new HttpError('range_incomplete', `${span} not fully covered by this processor; see details.coverage (allowPartial=true returns the covered part where supported)`, {
    requested,
    coverage,
  });
}
