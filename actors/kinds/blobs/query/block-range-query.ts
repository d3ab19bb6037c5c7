/**
 * Resolves `GET …/blobs/blocks` parameters into a block range and a page position. The resolved
 * range travels inside the opaque page token (the SDK's PageTokens), so every page of one query covers
 * the same range; a token cannot be combined with other range parameters.
 *
 * Bounds: absent bounds default to the edges of the covered output; a query naming either bound is
 * "explicit" and must be fully covered unless `allowPartial=true`; a query naming both may span at
 * most `max_block_range` blocks.
 */
import type { PageTokens, QueryRequest } from '../../sdk/query/index.js';
import type { BlockRange } from '../../sdk/tables.js';

export interface BlockRangeQuery {
  readonly fromBlock: number;
  readonly toBlock: number;
  /** First block of this page. */
  readonly nextBlock: number;
  readonly explicit: boolean;
  readonly allowPartial: boolean;
}

const EXPLICIT = 0x01;
const ALLOW_PARTIAL = 0x02;

/** null: no bounds were given and the processor covers nothing yet. */
export function resolveBlockRangeQuery(request: QueryRequest, ranges: readonly BlockRange[], tokens: PageTokens): BlockRangeQuery | null {
  const { query, maxBlockRange } = request;
  const cursor = query.cursor();
  if (cursor !== null) return fromToken(cursor, request, tokens);
  const from = query.optionalBlockNumber('fromBlock');
  const to = query.optionalBlockNumber('toBlock');
  const allowPartial = query.boolean('allowPartial', false);
  const firstCovered = ranges[0]?.from;
  const lastCovered = ranges[ranges.length - 1]?.to;
  if (from === undefined && to === undefined && (firstCovered === undefined || lastCovered === undefined)) return null;
  const fromBlock = from ?? (to === undefined ? firstCovered! : Math.min(firstCovered ?? to, to));
  const toBlock = to ?? Math.max(lastCovered ?? fromBlock, fromBlock);
  if (fromBlock > toBlock) throw request.error('invalid_request', `fromBlock ${fromBlock} is after toBlock ${toBlock}`, { fromBlock, toBlock });
  if (from !== undefined && to !== undefined && toBlock - fromBlock + 1 > maxBlockRange) {
    throw request.error('query_too_expensive', `the range spans ${toBlock - fromBlock + 1} blocks; the configured maximum is ${maxBlockRange}`, {
      requested: { fromBlock, toBlock },
      maxBlockRange,
    });
  }
  return { fromBlock, toBlock, nextBlock: fromBlock, explicit: from !== undefined || to !== undefined, allowPartial };
}

export function nextPageToken(tokens: PageTokens, query: BlockRangeQuery, nextBlock: number): string {
  const flags = (query.explicit ? EXPLICIT : 0) | (query.allowPartial ? ALLOW_PARTIAL : 0);
  return tokens.encode({ flags, values: [query.fromBlock, query.toBlock, nextBlock] });
}

function fromToken(cursor: string, request: QueryRequest, tokens: PageTokens): BlockRangeQuery {
  const { query } = request;
  const { flags, values } = tokens.decode(cursor, 3);
  const [fromBlock, toBlock, nextBlock] = values as [number, number, number];
  const resolved = { fromBlock, toBlock, nextBlock, explicit: (flags & EXPLICIT) !== 0, allowPartial: (flags & ALLOW_PARTIAL) !== 0 };
  if (nextBlock < fromBlock || nextBlock > toBlock) throw request.error('cursor_invalid', 'the page cursor is malformed');
  const conflicts =
    (query.has('fromBlock') && query.optionalBlockNumber('fromBlock') !== fromBlock) ||
    (query.has('toBlock') && query.optionalBlockNumber('toBlock') !== toBlock) ||
    (query.has('allowPartial') && query.boolean('allowPartial', false) !== resolved.allowPartial);
  if (conflicts) throw request.error('invalid_request', 'a page cursor carries its own range; send it with the same parameters or with limit only', { parameter: 'cursor' });
  return resolved;
}
