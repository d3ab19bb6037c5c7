/**
 * Opaque `nextCursor` page tokens for list routes (spec §2.2: clients must not parse a pagination
 * cursor or build one from a block number). A token is base64url of a small versioned record:
 *
 *   offset  size  field
 *   0       1     token format version (1)
 *   1       1     flags (route-defined bits)
 *   2       8     store epoch
 *   10      8     scope id: first 8 bytes of sha256(scope), e.g. "<instance>/blobs/blocks"
 *   18      1     value count n
 *   19      8·n   values (u64 big-endian each; the route's resolved range and position)
 *   end-8   8     checksum: first 8 bytes of sha256("page-token/v1" ‖ every byte before it)
 *
 * The checksum detects damaged or edited tokens; it is not a secret signature. A token from another
 * store epoch, route or processor instance, or of another format, is refused with `cursor_invalid`.
 */
import { createHash } from 'node:crypto';
import { HttpError } from './errors.js';

export const PAGE_TOKEN_VERSION = 1;

export interface PageTokenScope {
  readonly epoch: bigint;
  /** What the token may be used for: the processor instance and the route. */
  readonly scope: string;
}

export interface PageTokenRecord {
  readonly flags: number;
  /** Non-negative safe integers. */
  readonly values: readonly number[];
}

const HEADER_BYTES = 19;
const CHECKSUM_BYTES = 8;
const MAX_VALUES = 16;
const MAX_TOKEN_CHARS = 256;
const DOMAIN = Buffer.from('page-token/v1', 'utf8');

export function encodePageToken(scope: PageTokenScope, record: PageTokenRecord): string {
  if (record.values.length > MAX_VALUES) throw new RangeError(`a page token holds at most ${MAX_VALUES} values`);
  if (!Number.isInteger(record.flags) || record.flags < 0 || record.flags > 0xff) throw new RangeError('page token flags must fit one byte');
  const bytes = Buffer.alloc(HEADER_BYTES + 8 * record.values.length + CHECKSUM_BYTES);
  bytes[0] = PAGE_TOKEN_VERSION;
  bytes[1] = record.flags;
  bytes.writeBigUInt64BE(scope.epoch, 2);
  scopeId(scope.scope).copy(bytes, 10);
  bytes[18] = record.values.length;
  record.values.forEach((value, index) => {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`page token values must be non-negative safe integers, got ${value}`);
    bytes.writeBigUInt64BE(BigInt(value), HEADER_BYTES + 8 * index);
  });
  checksum(bytes.subarray(0, bytes.length - CHECKSUM_BYTES)).copy(bytes, bytes.length - CHECKSUM_BYTES);
  return bytes.toString('base64url');
}

/** Decodes a client's page token for `scope`, expecting exactly `valueCount` values; throws 400 `cursor_invalid`. */
export function decodePageToken(token: string, scope: PageTokenScope, valueCount: number): PageTokenRecord {
  const bytes = tokenBytes(token);
  const body = bytes.subarray(0, bytes.length - CHECKSUM_BYTES);
  if (!checksum(body).equals(bytes.subarray(bytes.length - CHECKSUM_BYTES))) throw invalid('the page cursor is damaged or was altered');
  if (bytes[0] !== PAGE_TOKEN_VERSION) throw invalid(`the page cursor has format ${bytes[0]}; this node reads format ${PAGE_TOKEN_VERSION}`);
  if (bytes.readBigUInt64BE(2) !== scope.epoch) throw invalid('the page cursor belongs to another store epoch; start the query again');
  if (!bytes.subarray(10, 18).equals(scopeId(scope.scope))) throw invalid('the page cursor belongs to another route or processor');
  const count = bytes[18] ?? 0;
  if (count !== valueCount || bytes.length !== HEADER_BYTES + 8 * count + CHECKSUM_BYTES) throw invalid('the page cursor is malformed');
  const values: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const value = bytes.readBigUInt64BE(HEADER_BYTES + 8 * index);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw invalid('the page cursor is malformed');
    values.push(Number(value));
  }
  return { flags: bytes[1] ?? 0, values };
}

function tokenBytes(token: string): Buffer {
  if (token.length === 0 || token.length > MAX_TOKEN_CHARS || !/^[A-Za-z0-9_-]+$/.test(token)) throw invalid('the page cursor is not a base64url token');
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.toString('base64url') !== token || bytes.length < HEADER_BYTES + CHECKSUM_BYTES) throw invalid('the page cursor is malformed');
  return bytes;
}

function scopeId(scope: string): Buffer {
  return createHash('sha256').update(scope, 'utf8').digest().subarray(0, 8);
}

function checksum(body: Uint8Array): Buffer {
  return createHash('sha256').update(DOMAIN).update(body).digest().subarray(0, CHECKSUM_BYTES);
}

function invalid(message: string): HttpError {
  return new HttpError('cursor_invalid', message);
}
