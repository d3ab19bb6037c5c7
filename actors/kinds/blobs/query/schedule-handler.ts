/**
 * `…/blobs/schedule` (a Page of every BlobSchedule row in activation order) and
 * `…/blobs/schedule?atBlock=N` (a Page holding the one row in force at block N).
 */
import { HttpError } from '../../../../api/errors.js';
import type { Handler } from '../../../../api/http.js';
import type { AggregateContext } from '../../../../api/aggregate/aggregate-context.js';
import { jsonBytesReply, pageBytes } from '../../../../api/aggregate/json-body.js';
import { readCoverage } from '../../../../api/aggregate/processor-reader.js';
import { optionalBlockNumber } from '../../../../api/aggregate/query-params.js';
import { rangeIncomplete } from '../../../../api/aggregate/range-incomplete.js';
import { blockRow, scheduleRows } from './blob-entity-reads.js';
import { retainedOutput, type TargetResolver } from './blob-query-target.js';
import { scheduleInForce } from './schedule-in-force.js';

export function scheduleHandler(context: AggregateContext, target: TargetResolver): Handler {
  return (request) => {
    const { processor } = target(request);
    const output = retainedOutput(context, processor);
    const atBlock = optionalBlockNumber(request.query, 'atBlock');
    const rows = output.entities ? scheduleRows(output.entities) : [];
    if (atBlock === undefined) return jsonBytesReply(pageBytes(rows, null, readCoverage(context.store, context.chainId, processor)));
    const requested = { fromBlock: atBlock, toBlock: atBlock };
    const coverage = readCoverage(context.store, context.chainId, processor, requested);
    const block = output.entities ? blockRow(output.entities, atBlock) : undefined;
    const timestamp = block ? (JSON.parse(block.toString('utf8')) as { timestamp: number }).timestamp : null;
    const activations = rows.map((row) => JSON.parse(row.toString('utf8')) as { activationBlock: number | null; activationTimestamp: number });
    const index = scheduleInForce(activations, atBlock, timestamp);
    if (index === 'unknown') throw rangeIncomplete(requested, coverage);
    if (index === null) throw new HttpError('not_found', `no blob schedule is in force at block ${atBlock}`, { atBlock });
    return jsonBytesReply(pageBytes([rows[index]!], null, coverage));
  };
}
