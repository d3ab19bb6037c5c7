/**
 * A kind's typed query extension as the kind declares it (spec §4.4): a name, under which the API mounts its
 * routes at `/v1/processors/{id}/query/<name>/…` (and at `/v1/q/<name>/…` when exactly one instance claims it),
 * and the routes, each a path under that base and a handler the API calls with a `QueryRequest`.
 */
import type { QueryRequest } from './query-request.js';

/** A 200 reply whose body is JSON bytes (made by `QueryRequest.json` or `page`). */
export interface QueryReply {
  readonly body: Buffer;
  readonly contentType: string;
}

/** One `GET` route of an extension. */
export interface QueryEndpoint {
  /** Under the extension's base, e.g. `/blocks/:number`: each `:name` segment is a path parameter (`request.path`). */
  readonly path: string;
  /** Answers one request; a thrown `CodedError` (`request.error`, or sdk/errors.ts) answers with the spec's error body. */
  readonly handle: (request: QueryRequest) => QueryReply | Promise<QueryReply>;
}

export interface QueryExtension {
  readonly name: string;
  readonly endpoints: readonly QueryEndpoint[];
}
