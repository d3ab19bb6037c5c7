/**
 * `…/blobs/blocks` (a Page of BlobsBlock by block number, spec §4.4 rules 1, 3, 4) and
 * `…/blobs/blocks/{number}` (one BlobsBlock). Rows are the stored bytes.
 */
import { HttpError } from '../../../../api/errors.js';
import type { Handler } from '../../../../api/http.js';
import { rangeCovered } from '../../../../store/coverage.js';
import type { AggregateContext } from '../../../../api/aggregate/aggregate-context.js';
import { jsonBytesReply, pageBytes } from '../../../../api/aggregate/json-body.js';
import { readCoverage } from '../../../../api/aggregate/processor-reader.js';
import { blockNumberParam, pageLimit } from '../../../../api/aggregate/query-params.js';
import { rangeIncomplete } from '../../../../api/aggregate/range-incomplete.js';
import { blockRow, blockRows } from './blob-entity-reads.js';
import { nextPageToken, resolveBlockRangeQuery } from './block-range-query.js';
import { retainedOutput, type TargetResolver } from './blob-query-target.js';

export function listBlocksHandler(context: AggregateContext, target: TargetResolver): Handler {
  return (request) => {
    const { processor } = target(request);
    const output = retainedOutput(context, processor);
    const limit = pageLimit(request.query, context.limits);
    const scope = { epoch: context.store.epoch, scope: `${processor.instance}/blobs/blocks` };
    const query = resolveBlockRangeQuery(request.query, output.ranges, scope, context.limits.maxBlockRange);
    const requested = query?.explicit ? { fromBlock: query.fromBlock, toBlock: query.toBlock } : undefined;
    const coverage = readCoverage(context.store, context.chainId, processor, requested);
    if (requested && !query?.allowPartial && !rangeCovered(output.ranges, requested.fromBlock, requested.toBlock)) throw rangeIncomplete(requested, coverage);
    if (query === null || output.entities === null) return jsonBytesReply(pageBytes([], null, coverage));
    const rows = blockRows(output.entities, query.nextBlock, query.toBlock, limit + 1);
    const following = rows.length > limit ? rows[limit]!.number : null;
    const nextCursor = following === null ? null : nextPageToken(scope, query, following);
    return jsonBytesReply(pageBytes(rows.slice(0, limit).map((row) => row.json), nextCursor, coverage));
  };
}

export function oneBlockHandler(context: AggregateContext, target: TargetResolver): Handler {
  return (request) => {
    const { processor, params } = target(request);
    const blockNumber = blockNumberParam(params[0] ?? '', 'number');
    const output = retainedOutput(context, processor);
    if (!rangeCovered(output.ranges, blockNumber, blockNumber)) {
      const requested = { fromBlock: blockNumber, toBlock: blockNumber };
      throw rangeIncomplete(requested, readCoverage(context.store, context.chainId, processor, requested));
    }
    const row = output.entities ? blockRow(output.entities, blockNumber) : undefined;
    if (!row) throw new HttpError('not_found', `processor '${processor.id}' holds no row for block ${blockNumber}`, { blockNumber });
    return jsonBytesReply(row);
  };
}
