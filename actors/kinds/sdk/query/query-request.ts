/**
 * What a kind's query route is handed per request (the API implements it): the instance queried, its typed
 * path and query parameters, the instance's retained output, progress and coverage, page tokens, JSON replies,
 * and the spec's errors a query answers with. Reads made in one synchronous turn share one LMDB read snapshot.
 */
import type { BinaryTable, BlockRange, ProcessorCoverage, ProcessorProgress } from '../tables.js';
import type { CodedError, ErrorCode } from '../errors.js';
import type { QueryReply } from './query-extension.js';
import type { PageTokens, PathParams, QueryParams } from './query-params.js';

/** The processor instance a request names (the one serving it now). */
export interface QueriedProcessor {
  readonly id: string;
  readonly instance: string;
  /** The kind's own `[[processors]]` options, as configured (see `instanceOptions`). */
  readonly options?: Readonly<Record<string, unknown>>;
}

/** An inclusive block interval a request names. */
export type BlockInterval = NonNullable<ProcessorCoverage['requested']>;

export interface RetainedOutput {
  /** Null while the instance's lane has not created its tables: nothing is covered yet. */
  readonly entities: BinaryTable | null;
  readonly ranges: readonly BlockRange[];
}

export interface QueryRequest {
  readonly processor: QueriedProcessor;
  readonly path: PathParams;
  readonly query: QueryParams;
  /** `max_block_range`: the most blocks a query naming both bounds may span. */
  readonly maxBlockRange: number;
  /** The entity table and covered ranges; 409 `output_not_retained` for an instance with `output = none`. */
  output(): RetainedOutput;
  /** The instance's progress (finalized block, state origin) as stored. */
  progress(): ProcessorProgress;
  /** ProcessorCoverage (spec §2.1), with `requested` when the request names an interval. */
  coverage(requested?: BlockInterval): ProcessorCoverage;
  /** A spec error (§7.1) to throw, answered with its code's status and `retryable` flag (a user's kind imports no `CodedError` at run time). */
  error(code: ErrorCode, message: string, details?: Record<string, unknown>): CodedError;
  /** 409 `range_incomplete` (spec §7.2 rule 1): to throw when `requested` is not fully covered; never an empty success. */
  rangeIncomplete(requested: BlockInterval, coverage: ProcessorCoverage): CodedError;
  /** Page tokens of this instance's `route` (e.g. `blobs/blocks`). */
  pageTokens(route: string): PageTokens;
  /** A reply of JSON bytes, sent as they are. */
  json(body: Buffer): QueryReply;
  /** The Page shape (spec §2.2) {data: [rows…], nextCursor, coverage}, rows as stored JSON bytes. */
  page(rows: readonly Uint8Array[], nextCursor: string | null, coverage: ProcessorCoverage): QueryReply;
  /** Query-and-follow (spec §2.7) of one of the kind's collections, its parameters in the query string. */
  collectionSnapshot(collection: string): Promise<QueryReply>;
}
