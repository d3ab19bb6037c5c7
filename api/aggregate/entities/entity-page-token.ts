/**
 * Page tokens of the generic entity API, built on api/page-token.ts. Two kinds share the `cursor`
 * parameter of `…/collections/{c}/entities` and are told apart by their scope:
 *
 *   live page   scope `<instance>/collections/<c>/entities`: the resolved filter (block and timestamp
 *               bounds, each stored +1 so 0 means "absent") and the scan position after which the next
 *               page starts (length, then 6-byte chunks: a page token holds safe integers only).
 *   snapshot    scope `<instance>/collections/<c>/snapshot`: the 12-byte snapshot id (two 6-byte
 *               chunks) and the ordinal of the page's first row.
 */
import { HttpError } from '../../errors.js';
import { decodePageToken, encodePageToken, type PageTokenScope } from '../../page-token.js';

export interface EntityFilter {
  readonly fromBlock: number | null;
  readonly toBlock: number | null;
  readonly fromTimestamp: number | null;
  readonly toTimestamp: number | null;
  /** True when the caller named a block bound (coverage must be complete). */
  readonly explicit: boolean;
}

export interface LivePagePosition {
  readonly filter: EntityFilter;
  readonly after: Buffer | null;
}

export interface SnapshotPagePosition {
  readonly snapshotId: string;
  readonly ordinal: number;
}

const CHUNK = 6;
const MAX_POSITION_BYTES = 11 * CHUNK;
const EXPLICIT = 0x01;
const HAS_POSITION = 0x02;
export const SNAPSHOT_ID_BYTES = 12;

export function liveScope(epoch: bigint, instance: string, collection: string): PageTokenScope {
  return { epoch, scope: `${instance}/collections/${collection}/entities` };
}

export function snapshotScope(epoch: bigint, instance: string, collection: string): PageTokenScope {
  return { epoch, scope: `${instance}/collections/${collection}/snapshot` };
}

const plusOne = (value: number | null) => (value === null ? 0 : value + 1);
const minusOne = (value: number) => (value === 0 ? null : value - 1);

export function encodeLivePage(scope: PageTokenScope, position: LivePagePosition): string {
  const { filter, after } = position;
  if (after && after.length > MAX_POSITION_BYTES) throw new RangeError(`a scan position holds at most ${MAX_POSITION_BYTES} bytes`);
  const chunks: number[] = [];
  for (let offset = 0; after && offset < after.length; offset += CHUNK) chunks.push(after.readUIntBE(offset, Math.min(CHUNK, after.length - offset)));
  const flags = (filter.explicit ? EXPLICIT : 0) | (after ? HAS_POSITION : 0);
  const values = [plusOne(filter.fromBlock), plusOne(filter.toBlock), plusOne(filter.fromTimestamp), plusOne(filter.toTimestamp), after?.length ?? 0, ...chunks];
  return encodePageToken(scope, { flags, values });
}

/** Decodes a live-page token; throws `cursor_invalid` (400) when it is not one of this scope. */
export function decodeLivePage(token: string, scope: PageTokenScope): LivePagePosition {
  const raw = Buffer.from(token, 'base64url');
  const count = raw[18] ?? 0;
  const { flags, values } = decodePageToken(token, scope, count);
  if (values.length < 5) throw invalid();
  const [fromBlock, toBlock, fromTimestamp, toTimestamp, length] = values as [number, number, number, number, number];
  const chunks = values.slice(5);
  if (length > MAX_POSITION_BYTES || chunks.length !== Math.ceil(length / CHUNK) || ((flags & HAS_POSITION) !== 0) !== length > 0) throw invalid();
  let after: Buffer | null = null;
  if (length > 0) {
    after = Buffer.alloc(length);
    chunks.forEach((chunk, index) => {
      const size = Math.min(CHUNK, length - index * CHUNK);
      if (chunk >= 2 ** (8 * size)) throw invalid();
      after!.writeUIntBE(chunk, index * CHUNK, size);
    });
  }
  const filter: EntityFilter = {
    fromBlock: minusOne(fromBlock), toBlock: minusOne(toBlock), fromTimestamp: minusOne(fromTimestamp), toTimestamp: minusOne(toTimestamp), explicit: (flags & EXPLICIT) !== 0,
  };
  return { filter, after };
}

export function encodeSnapshotPage(scope: PageTokenScope, position: SnapshotPagePosition): string {
  const id = Buffer.from(position.snapshotId, 'base64url');
  if (id.length !== SNAPSHOT_ID_BYTES) throw new RangeError('snapshot ids are 12 bytes');
  return encodePageToken(scope, { flags: 0, values: [id.readUIntBE(0, CHUNK), id.readUIntBE(CHUNK, CHUNK), position.ordinal] });
}

export function decodeSnapshotPage(token: string, scope: PageTokenScope): SnapshotPagePosition {
  const { values } = decodePageToken(token, scope, 3);
  const [high, low, ordinal] = values as [number, number, number];
  if (high >= 2 ** 48 || low >= 2 ** 48) throw invalid();
  const id = Buffer.alloc(SNAPSHOT_ID_BYTES);
  id.writeUIntBE(high, 0, CHUNK);
  id.writeUIntBE(low, CHUNK, CHUNK);
  return { snapshotId: id.toString('base64url'), ordinal };
}

/** True when `token` carries the scope of `scope` (checked by its checksum-protected scope bytes, before a full decode). */
export function tokenHasScope(token: string, scope: PageTokenScope): boolean {
  try {
    const raw = Buffer.from(token, 'base64url');
    const count = raw[18] ?? 0;
    decodePageToken(token, scope, count);
    return true;
  } catch {
    return false;
  }
}

function invalid(): HttpError {
  return new HttpError('cursor_invalid', 'the page cursor is malformed');
}
