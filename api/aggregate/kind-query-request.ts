/**
 * The API's side of a kind's query route: one per request, over the listener's store and the processor instance
 * the request names. It is the SDK's QueryRequest (actors/kinds/sdk/query/query-request.ts) — the API imports no
 * kind, so the compiler checks the match where a kind's endpoints become the API's (KindSurface, QueryEndpoint).
 */
import type { BlockRange, ProcessorCoverage, ProcessorProgress } from '../../store/coverage.js';
import type { BinaryTable } from '../../store/store.js';
import { decodePageToken, encodePageToken, type PageTokenRecord } from '../page-token.js';
import { HttpError } from '../errors.js';
import type { ErrorCode } from '../../runtime/errors.js';
import type { AggregateContext } from './aggregate-context.js';
import { requireRetainedOutput, type ConfiguredProcessor } from './configured-processors.js';
import { jsonBytesReply, pageBytes, type JsonReply } from './json-body.js';
import { KindPathParams, KindQueryParams } from './kind-query-params.js';
import { coveredRanges, processorTables, progressOf, readCoverage, type BlockInterval } from './processor-reader.js';
import { rangeIncomplete } from './range-incomplete.js';

export interface RetainedOutput {
  /** Null while the processor's lane has not created its tables: nothing is covered yet. */
  readonly entities: BinaryTable | null;
  readonly ranges: readonly BlockRange[];
}

/** What every request of one mounted endpoint shares. */
export interface KindQueryMount {
  readonly context: AggregateContext;
  /** The endpoint's path parameter names, in order. */
  readonly names: readonly string[];
  /** Query-and-follow of a collection (entities/query-and-follow-routes.ts, handed in: the entity routes import this folder). */
  readonly collectionSnapshot: (context: AggregateContext, processorId: string, collection: string, query: URLSearchParams) => Promise<JsonReply>;
}

export class KindQueryRequest {
  readonly path: KindPathParams;
  readonly query: KindQueryParams;
  private readonly context: AggregateContext;

  /** `params`: the path parameters after the processor id; `search`: the query string. */
  constructor(private readonly mount: KindQueryMount, readonly processor: ConfiguredProcessor, params: readonly string[], private readonly search: URLSearchParams) {
    this.context = mount.context;
    this.path = new KindPathParams(params, mount.names);
    this.query = new KindQueryParams(search, mount.context.limits);
  }

  get maxBlockRange(): number {
    return this.context.limits.maxBlockRange;
  }

  /** The processor's entity table and coverage; `output_not_retained` for `output = none`. */
  output(): RetainedOutput {
    requireRetainedOutput(this.processor);
    const tables = processorTables(this.context.store, this.processor.instance);
    return { entities: tables?.entities ?? null, ranges: coveredRanges(tables) };
  }

  progress(): ProcessorProgress {
    return progressOf(this.processor, processorTables(this.context.store, this.processor.instance));
  }

  coverage(requested?: BlockInterval): ProcessorCoverage {
    return readCoverage(this.context.store, this.context.chainId, this.processor, requested);
  }

  error(code: ErrorCode, message: string, details?: Record<string, unknown>): HttpError {
    return new HttpError(code, message, details);
  }

  rangeIncomplete(requested: BlockInterval, coverage: ProcessorCoverage): HttpError {
    return rangeIncomplete(requested, coverage);
  }

  pageTokens(route: string): { encode(record: PageTokenRecord): string; decode(token: string, valueCount: number): PageTokenRecord } {
    const scope = { epoch: this.context.store.epoch, scope: `${this.processor.instance}/${route}` };
    return { encode: (record) => encodePageToken(scope, record), decode: (token, valueCount) => decodePageToken(token, scope, valueCount) };
  }

  json(body: Buffer): JsonReply {
    return jsonBytesReply(body);
  }

  page(rows: readonly Uint8Array[], nextCursor: string | null, coverage: ProcessorCoverage): JsonReply {
    return jsonBytesReply(pageBytes(rows, nextCursor, coverage));
  }

  collectionSnapshot(collection: string): Promise<JsonReply> {
    return this.mount.collectionSnapshot(this.context, this.processor.id, collection, this.search);
  }
}
