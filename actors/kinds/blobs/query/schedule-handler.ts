/**
 * `…/blobs/schedule` (a Page of every BlobSchedule row in activation order) and
 * `…/blobs/schedule?atBlock=N` (a Page holding the one row in force at block N).
 */
import type { QueryReply, QueryRequest } from '../../sdk/query/index.js';
import { blockRow, scheduleRows } from './blob-entity-reads.js';
import { scheduleInForce } from './schedule-in-force.js';

export function schedule(request: QueryRequest): QueryReply {
  const output = request.output();
  const atBlock = request.query.optionalBlockNumber('atBlock');
  const rows = output.entities ? scheduleRows(output.entities) : [];
  if (atBlock === undefined) return request.page(rows, null, request.coverage());
  const requested = { fromBlock: atBlock, toBlock: atBlock };
  const coverage = request.coverage(requested);
  const block = output.entities ? blockRow(output.entities, atBlock) : undefined;
  const timestamp = block ? (JSON.parse(block.toString('utf8')) as { timestamp: number }).timestamp : null;
  const activations = rows.map((row) => JSON.parse(row.toString('utf8')) as { activationBlock: number | null; activationTimestamp: number });
  const index = scheduleInForce(activations, atBlock, timestamp);
  if (index === 'unknown') throw request.rangeIncomplete(requested, coverage);
  if (index === null) throw request.error('not_found', `no blob schedule is in force at block ${atBlock}`, { atBlock });
  return request.page([rows[index]!], null, coverage);
}
