/**
 * A kind query's typed path and query parameters (the SDK's PathParams and QueryParams,
 * actors/kinds/sdk/query/query-params.ts), validated by the API's one set of parameter rules (query-params.ts).
 * Path parameters are named by the endpoint's `:name` segments.
 */
import { addressParam, blockNumberParam, booleanParam, optionalBlockNumber, pageLimit, requiredBlockNumber, transactionHashParam, type PageLimits } from './query-params.js';

/** The `:name` segments of an endpoint path, in order. */
export function pathParamNames(path: string): string[] {
  return path.split('/').filter((segment) => segment.startsWith(':')).map((segment) => segment.slice(1));
}

export class KindPathParams {
  constructor(private readonly params: readonly string[], private readonly names: readonly string[]) {}

  text(name: string): string {
    const index = this.names.indexOf(name);
    if (index < 0) throw new Error(`the route has no path parameter '${name}' (it has ${this.names.map((n) => `':${n}'`).join(', ') || 'none'})`);
    return this.params[index] ?? '';
  }

  blockNumber(name: string): number {
    return blockNumberParam(this.text(name), name);
  }

  address(name: string): string {
    return addressParam(this.text(name), name);
  }

  transactionHash(name: string): string {
    return transactionHashParam(this.text(name), name);
  }
}

export class KindQueryParams {
  constructor(private readonly query: URLSearchParams, private readonly limits: PageLimits) {}

  has(name: string): boolean {
    return this.query.has(name);
  }

  optionalBlockNumber(name: string): number | undefined {
    return optionalBlockNumber(this.query, name);
  }

  requiredBlockNumber(name: string): number {
    return requiredBlockNumber(this.query, name);
  }

  boolean(name: string, fallback: boolean): boolean {
    return booleanParam(this.query, name, fallback);
  }

  cursor(): string | null {
    return this.query.get('cursor');
  }

  pageLimit(): number {
    return pageLimit(this.query, this.limits);
  }
}
