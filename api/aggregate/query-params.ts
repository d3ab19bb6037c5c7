/**
 * Validation of query and path parameters, once at the edge: every malformed value is a 400
 * `invalid_request` naming the parameter; a page `limit` over the configured maximum is 413
 * `query_too_expensive`.
 */
import { HttpError } from '../errors.js';
import { isAddressHex, isHashHex } from '../../net/eth/hex.js';

export interface PageLimits {
  readonly defaultPageLimit: number;
  readonly maxPageLimit: number;
  readonly maxBlockRange: number;
}

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** A non-negative safe integer written in decimal, or undefined when absent. */
export function optionalBlockNumber(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  return blockNumberParam(raw, name);
}

export function requiredBlockNumber(query: URLSearchParams, name: string): number {
  const value = optionalBlockNumber(query, name);
  if (value === undefined) throw new HttpError('invalid_request', `query parameter '${name}' is required`, { parameter: name });
  return value;
}

export function blockNumberParam(raw: string, name: string): number {
  const value = Number(raw);
  if (!DECIMAL.test(raw) || !Number.isSafeInteger(value)) {
    throw new HttpError('invalid_request', `'${name}' must be a non-negative decimal integer, got '${truncate(raw)}'`, { parameter: name });
  }
  return value;
}

/** A path parameter holding a 20-byte address, lower-cased. */
export function addressParam(raw: string, name: string): string {
  if (!isAddressHex(raw)) throw new HttpError('invalid_request', `path parameter '${name}' must be a 0x-prefixed 20-byte hex address`, { parameter: name, value: raw.slice(0, 80) });
  return raw.toLowerCase();
}

/** A path parameter holding a transaction hash, lower-cased. */
export function transactionHashParam(raw: string, name: string): string {
  if (!isHashHex(raw)) throw new HttpError('invalid_request', 'the transaction hash must be 0x followed by 64 hex digits', { parameter: name });
  return raw.toLowerCase();
}

/** `true` or `false`; absent is `fallback`. */
export function booleanParam(query: URLSearchParams, name: string, fallback: boolean): boolean {
  const raw = query.get(name);
  if (raw === null) return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new HttpError('invalid_request', `'${name}' must be true or false, got '${truncate(raw)}'`, { parameter: name });
}

/** The page size: the configured default when absent; 400 when not a positive integer; 413 over the maximum. */
export function pageLimit(query: URLSearchParams, limits: PageLimits): number {
  const raw = query.get('limit');
  if (raw === null) return limits.defaultPageLimit;
  const value = Number(raw);
  if (!DECIMAL.test(raw) || !Number.isSafeInteger(value) || value < 1) {
    throw new HttpError('invalid_request', `'limit' must be a positive decimal integer, got '${truncate(raw)}'`, { parameter: 'limit' });
  }
  if (value > limits.maxPageLimit) {
    throw new HttpError('query_too_expensive', `'limit' ${value} exceeds the configured maximum of ${limits.maxPageLimit}`, { limit: value, maxPageLimit: limits.maxPageLimit });
  }
  return value;
}

/** Parameter values are echoed only in part: they may be long or carry tokens. */
function truncate(raw: string): string {
  return raw.length > 32 ? `${raw.slice(0, 32)}…` : raw;
}
