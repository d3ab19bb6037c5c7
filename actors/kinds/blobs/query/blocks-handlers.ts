/**
 * `…/blobs/blocks` (a Page of BlobsBlock by block number, spec §4.4 rules 1, 3, 4) and
 * `…/blobs/blocks/{number}` (one BlobsBlock). Rows are the stored bytes.
 */
import type { QueryReply, QueryRequest } from '../../sdk/query/index.js';
import { rangeCovered } from '../../sdk/tables.js';
import { blockRow, blockRows } from './blob-entity-reads.js';
import { nextPageToken, resolveBlockRangeQuery } from './block-range-query.js';

export function listBlocks(request: QueryRequest): QueryReply {
  const output = request.output();
  const limit = request.query.pageLimit();
  const tokens = request.pageTokens('blobs/blocks');
  const query = resolveBlockRangeQuery(request, output.ranges, tokens);
  const requested = query?.explicit ? { fromBlock: query.fromBlock, toBlock: query.toBlock } : undefined;
  const coverage = request.coverage(requested);
  if (requested && !query?.allowPartial && !rangeCovered(output.ranges, requested.fromBlock, requested.toBlock)) throw request.rangeIncomplete(requested, coverage);
  if (query === null || output.entities === null) return request.page([], null, coverage);
  const rows = blockRows(output.entities, query.nextBlock, query.toBlock, limit + 1);
  const following = rows.length > limit ? rows[limit]!.number : null;
  const nextCursor = following === null ? null : nextPageToken(tokens, query, following);
  return request.page(rows.slice(0, limit).map((row) => row.json), nextCursor, coverage);
}

export function oneBlock(request: QueryRequest): QueryReply {
  const blockNumber = request.path.blockNumber('number');
  const output = request.output();
  if (!rangeCovered(output.ranges, blockNumber, blockNumber)) {
    const requested = { fromBlock: blockNumber, toBlock: blockNumber };
    throw request.rangeIncomplete(requested, request.coverage(requested));
  }
  const row = output.entities ? blockRow(output.entities, blockNumber) : undefined;
  if (!row) throw request.error('not_found', `processor '${request.processor.id}' holds no row for block ${blockNumber}`, { blockNumber });
  return request.json(row);
}
