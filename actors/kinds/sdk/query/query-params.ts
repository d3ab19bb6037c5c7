/**
 * A query request's typed parameters (validated once, at the edge): each accessor returns the value or throws
 * 400 `invalid_request` naming the parameter; a page `limit` over the configured maximum is 413
 * `query_too_expensive`. Path parameters are named by the endpoint's `:name` segments.
 */

export interface PathParams {
  /** The segment as sent. */
  text(name: string): string;
  /** A non-negative decimal block number. */
  blockNumber(name: string): number;
  /** A 20-byte `0x`-hex address, lower-cased. */
  address(name: string): string;
  /** A 32-byte `0x`-hex transaction hash, lower-cased. */
  transactionHash(name: string): string;
}

export interface QueryParams {
  has(name: string): boolean;
  /** A non-negative decimal block number, or undefined when absent. */
  optionalBlockNumber(name: string): number | undefined;
  /** As `optionalBlockNumber`, and 400 when absent. */
  requiredBlockNumber(name: string): number;
  /** `true` or `false`; absent is `fallback`. */
  boolean(name: string, fallback: boolean): boolean;
  /** The page cursor (`cursor`) as sent, or null. */
  cursor(): string | null;
  /** The page size (`limit`): the configured default when absent. */
  pageLimit(): number;
}

/** What an opaque page token carries: route-defined flag bits and non-negative safe integers. */
export interface PageTokenRecord {
  readonly flags: number;
  readonly values: readonly number[];
}

/** Page tokens (spec §2.2 `nextCursor`) bound to the store epoch, the instance and one route. */
export interface PageTokens {
  encode(record: PageTokenRecord): string;
  /** The record of a client's token holding exactly `valueCount` values; 400 `cursor_invalid` otherwise. */
  decode(token: string, valueCount: number): PageTokenRecord;
}
