/**
 * What the API knows of a processor kind, handed to it by whoever starts the listener (the API
 * imports no kind): the kind's descriptor as data (travels with each configured processor), and
 * its code surface — collections for the generic entity routes and its typed query extensions —
 * through a registry keyed by kind name.
 */
import type { CollectionDescription } from '../../store/collection.js';
import type { Reply, Request } from '../http.js';
import type { ConfiguredProcessor } from './configured-processors.js';
import type { KindQueryRequest } from './kind-query-request.js';

/** The processor a typed query request names, and its path parameters after the processor id. */
export interface QueryTarget {
  readonly processor: ConfiguredProcessor;
  readonly params: readonly string[];
}

export type TargetResolver = (request: Request) => QueryTarget;

/**
 * One typed route of a query extension: a path under its base (`/blocks/:number`) and the kind's handler, called
 * with a KindQueryRequest (a kind declares it against the SDK's QueryRequest, which this must satisfy).
 */
export interface QueryEndpoint {
  readonly path: string;
  readonly handle: (request: KindQueryRequest) => Reply | Promise<Reply>;
}

/** A kind's typed query extension, mounted at `/v1/processors/{id}/query/<name>/…` and, when one instance claims it, `/v1/q/<name>/…`. */
export interface QueryExtension {
  readonly name: string;
  readonly endpoints: readonly QueryEndpoint[];
}

/** A kind's code the API calls. */
export interface KindSurface {
  readonly collections: readonly CollectionDescription[];
  readonly queryExtensions: readonly QueryExtension[];
}

/** Kind name → surface. */
export type KindSurfaces = ReadonlyMap<string, KindSurface>;
