/**
 * Response bodies assembled from pre-rendered JSON bytes: rows and envelopes read from LMDB are
 * concatenated as they are, never parsed and re-encoded.
 */
import type { Reply } from '../http.js';

const PAGE_OPEN = Buffer.from('{"data":[');
const COMMA = Buffer.from(',');
const NEXT_CURSOR = Buffer.from('],"nextCursor":');
const COVERAGE = Buffer.from(',"coverage":');
const CLOSE = Buffer.from('}');

/** The Page shape (spec §2.2): {data: [rows…], nextCursor, coverage}. */
export function pageBytes(rows: readonly Uint8Array[], nextCursor: string | null, coverage: unknown): Buffer {
  const parts: Uint8Array[] = [PAGE_OPEN];
  rows.forEach((row, index) => {
    if (index > 0) parts.push(COMMA);
    parts.push(row);
  });
  parts.push(NEXT_CURSOR, Buffer.from(JSON.stringify(nextCursor)), COVERAGE, Buffer.from(JSON.stringify(coverage)), CLOSE);
  return Buffer.concat(parts);
}

/** A reply whose body is JSON bytes. */
export type JsonReply = Reply & { readonly body: Buffer; readonly contentType: string };

/** A 200 reply whose body is already JSON bytes. */
export function jsonBytesReply(body: Buffer): JsonReply {
  return { body, contentType: 'application/json' };
}
