/**
 * The `eth` wire protocol messages the node speaks, eth/68 and eth/69 (EIP-7642), as payload bytes (the RLP a
 * message code is followed by, before snappy). Decoding validates shape once at the edge; headers, bodies and
 * receipts are kept as the raw RLP slices the peer sent, so verification hashes exactly the bytes received.
 *
 * - Status eth/68: `[version, networkid, td, blockhash, genesis, forkid]`; eth/69: `[version, networkid, genesis,
 *   forkid, earliest, latest, latestHash]` (no total difficulty).
 * - Requests and answers carry a request id (eth/66+): `[request-id, [...]]`.
 * - Receipts eth/68: per block a list of consensus receipts (typed ones as a byte string `type || rlp(...)`, with
 *   the bloom); eth/69: per block `[[type, status, cumulativeGasUsed, logs], ...]` (no bloom). Both convert to the
 *   stored eth/69 form.
 * - BlockRangeUpdate (eth/69, 0x11): `[earliest, latest, latestHash]`.
 */
import { RlpDecodeError } from '../eth/errors.js';
import { bytesToHex, hexToBytes, type Hash, type Hex } from '../eth/hex.js';
import { decodeReceipt, encodeEth69Receipts, encodeReceipt, type Receipt } from '../eth/receipt.js';
import { encodeRlp, type RlpInput } from '../eth/rlp.js';
import { rlpChildren, rlpFields, rlpSpan, rlpUint, rlpWhole, type RlpSpan } from '../eth/rlp-walk.js';
import type { ForkId } from '../eth/fork-id.js';

export const ETH_CODES = {
  status: 0x00,
  newBlockHashes: 0x01,
  transactions: 0x02,
  getBlockHeaders: 0x03,
  blockHeaders: 0x04,
  getBlockBodies: 0x05,
  blockBodies: 0x06,
  newBlock: 0x07,
  newPooledTransactionHashes: 0x08,
  getPooledTransactions: 0x09,
  pooledTransactions: 0x0a,
  getReceipts: 0x0f,
  receipts: 0x10,
  blockRangeUpdate: 0x11,
} as const;

/** Message-id space each version occupies after the base protocol's 16 ids (eth/68 ends at 0x10, eth/69 at 0x11). */
export const ETH_MESSAGE_SPACE: Readonly<Record<68 | 69, number>> = { 68: 17, 69: 18 };
export type EthVersion = 68 | 69;

export interface EthStatus {
  readonly version: EthVersion;
  readonly networkId: bigint;
  readonly genesis: Hash;
  readonly forkId: ForkId;
  /** eth/68: the total difficulty (0 after the merge means nothing); absent in eth/69. */
  readonly totalDifficulty?: bigint;
  /** eth/68: the best block hash; eth/69: `latestHash`. */
  readonly head: Hash;
  /** eth/69 only: the range of blocks the peer serves. */
  readonly earliest?: number;
  readonly latest?: number;
}

export interface BlockRange {
  readonly earliest: number;
  readonly latest: number;
  readonly latestHash: Hash;
}

export type HeaderOrigin = { readonly number: number } | { readonly hash: Hash };

export interface GetBlockHeaders {
  readonly requestId: bigint;
  readonly origin: HeaderOrigin;
  readonly limit: number;
  readonly skip: number;
  readonly reverse: boolean;
}

export interface HashesRequest {
  readonly requestId: bigint;
  readonly hashes: readonly Hash[];
}

/** An answer whose items are raw RLP slices: headers, bodies (`[txs, uncles, withdrawals?]`) or eth/69 receipt lists. */
export interface ItemsResponse {
  readonly requestId: bigint;
  readonly items: readonly Uint8Array[];
}

/** Largest message payload the node accepts or sends (geth's limit for eth messages). */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

const HASH_BYTES = 32;

function uint(value: number | bigint): bigint {
  return BigInt(value);
}

function forkIdToRlp(forkId: ForkId): RlpInput {
  return [hexToBytes(forkId.hash, 4), uint(forkId.next)];
}

export function encodeStatus(status: EthStatus): Uint8Array {
  const common = [uint(status.version), status.networkId];
  if (status.version === 68) {
    return encodeRlp([...common, status.totalDifficulty ?? 0n, hexToBytes(status.head, HASH_BYTES), hexToBytes(status.genesis, HASH_BYTES), forkIdToRlp(status.forkId)]);
  }
  return encodeRlp([...common, hexToBytes(status.genesis, HASH_BYTES), forkIdToRlp(status.forkId), uint(status.earliest ?? 0), uint(status.latest ?? 0), hexToBytes(status.head, HASH_BYTES)]);
}

class Reader {
  constructor(readonly bytes: Uint8Array, readonly subject: string) {}
  whole(): RlpSpan {
    return rlpWhole(this.bytes, this.subject);
  }
  fields(span: RlpSpan, counts: readonly number[]): RlpSpan[] {
    return rlpFields(this.bytes, span, this.subject, counts);
  }
  children(span: RlpSpan): RlpSpan[] {
    return rlpChildren(this.bytes, span, this.subject);
  }
  uint(span: RlpSpan, field: string, maxBytes = 8): bigint {
    return rlpUint(this.bytes, span, this.subject, field, maxBytes);
  }
  number(span: RlpSpan, field: string): number {
    const value = this.uint(span, field, 8);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RlpDecodeError(this.subject, `field ${field}: ${value} is above 2^53`);
    return Number(value);
  }
  fixed(span: RlpSpan, field: string, length: number): Hex {
    if (span.list || span.end - span.payload !== length) throw new RlpDecodeError(this.subject, `field ${field}: expected ${length} bytes`);
    return bytesToHex(this.bytes.subarray(span.payload, span.end));
  }
  slice(span: RlpSpan): Uint8Array {
    return this.bytes.subarray(span.offset, span.end);
  }
  forkId(span: RlpSpan): ForkId {
    const [hash, next] = this.fields(span, [2]);
    return { hash: this.fixed(hash!, 'forkid.hash', 4), next: this.number(next!, 'forkid.next') };
  }
}

export function decodeStatus(bytes: Uint8Array): EthStatus {
  const r = new Reader(bytes, 'eth status');
  const fields = r.children(r.whole());
  if (fields.length < 1) throw new RlpDecodeError(r.subject, 'empty status');
  const version = r.number(fields[0]!, 'version');
  if (version === 68) {
    // Extra trailing fields are allowed by devp2p's forward-compatibility rule; fewer are not.
    if (fields.length < 6) throw new RlpDecodeError(r.subject, `eth/68 status needs 6 fields, got ${fields.length}`);
    return {
      version, networkId: r.uint(fields[1]!, 'networkid'), totalDifficulty: r.uint(fields[2]!, 'td', 32),
      head: r.fixed(fields[3]!, 'blockhash', HASH_BYTES), genesis: r.fixed(fields[4]!, 'genesis', HASH_BYTES), forkId: r.forkId(fields[5]!),
    };
  }
  if (version === 69) {
    if (fields.length < 7) throw new RlpDecodeError(r.subject, `eth/69 status needs 7 fields, got ${fields.length}`);
    return {
      version, networkId: r.uint(fields[1]!, 'networkid'), genesis: r.fixed(fields[2]!, 'genesis', HASH_BYTES), forkId: r.forkId(fields[3]!),
      earliest: r.number(fields[4]!, 'earliest'), latest: r.number(fields[5]!, 'latest'), head: r.fixed(fields[6]!, 'latestHash', HASH_BYTES),
    };
  }
  throw new RlpDecodeError(r.subject, `unsupported eth version ${version}`);
}

export function encodeBlockRangeUpdate(range: BlockRange): Uint8Array {
  return encodeRlp([uint(range.earliest), uint(range.latest), hexToBytes(range.latestHash, HASH_BYTES)]);
}

export function decodeBlockRangeUpdate(bytes: Uint8Array): BlockRange {
  const r = new Reader(bytes, 'eth BlockRangeUpdate');
  const fields = r.children(r.whole());
  if (fields.length < 3) throw new RlpDecodeError(r.subject, `expected [earliest, latest, latestHash], got ${fields.length} fields`);
  const range = { earliest: r.number(fields[0]!, 'earliest'), latest: r.number(fields[1]!, 'latest'), latestHash: r.fixed(fields[2]!, 'latestHash', HASH_BYTES) };
  if (range.earliest > range.latest) throw new RlpDecodeError(r.subject, `earliest ${range.earliest} is above latest ${range.latest}`);
  return range;
}

export function encodeGetBlockHeaders(request: GetBlockHeaders): Uint8Array {
  const origin = 'hash' in request.origin ? hexToBytes(request.origin.hash, HASH_BYTES) : uint(request.origin.number);
  return encodeRlp([request.requestId, [origin, uint(request.limit), uint(request.skip), request.reverse ? 1n : 0n]]);
}

export function decodeGetBlockHeaders(bytes: Uint8Array): GetBlockHeaders {
  const r = new Reader(bytes, 'eth GetBlockHeaders');
  const [id, query] = r.fields(r.whole(), [2]);
  const [origin, limit, skip, reverse] = r.fields(query!, [4]);
  const originBytes = origin!.end - origin!.payload;
  return {
    requestId: r.uint(id!, 'request-id'),
    origin: !origin!.list && originBytes === HASH_BYTES ? { hash: r.fixed(origin!, 'origin', HASH_BYTES) } : { number: r.number(origin!, 'origin') },
    limit: r.number(limit!, 'limit'),
    skip: r.number(skip!, 'skip'),
    reverse: r.uint(reverse!, 'reverse', 1) === 1n,
  };
}

function encodeHashes(request: HashesRequest): Uint8Array {
  return encodeRlp([request.requestId, request.hashes.map((hash) => hexToBytes(hash, HASH_BYTES))]);
}

function decodeHashes(bytes: Uint8Array, subject: string): HashesRequest {
  const r = new Reader(bytes, subject);
  const [id, list] = r.fields(r.whole(), [2]);
  return { requestId: r.uint(id!, 'request-id'), hashes: r.children(list!).map((span) => r.fixed(span, 'hash', HASH_BYTES)) };
}

export const encodeGetBlockBodies = encodeHashes;
export const encodeGetReceipts = encodeHashes;
export const decodeGetBlockBodies = (bytes: Uint8Array) => decodeHashes(bytes, 'eth GetBlockBodies');
export const decodeGetReceipts = (bytes: Uint8Array) => decodeHashes(bytes, 'eth GetReceipts');

/** `[request-id, [item, ...]]` around items that are already RLP-encoded (headers, bodies, receipt lists). */
export function encodeItemsResponse(response: ItemsResponse): Uint8Array {
  // One buffer, every byte written once: the answer is the largest thing a serving peer builds (megabytes of
  // bodies or receipts), and `rawList` of `rawList` copied it twice into zero-filled buffers.
  const id = encodeRlp(response.requestId);
  let itemsLength = 0;
  for (const item of response.items) itemsLength += item.length;
  const itemsPrefix = listPrefix(itemsLength);
  const payload = id.length + itemsPrefix.length + itemsLength;
  const prefix = listPrefix(payload);
  const out = uninitializedBytes(prefix.length + payload);
  out.set(prefix, 0);
  let offset = prefix.length;
  out.set(id, offset);
  offset += id.length;
  out.set(itemsPrefix, offset);
  offset += itemsPrefix.length;
  for (const item of response.items) {
    out.set(item, offset);
    offset += item.length;
  }
  return out;
}

/**
 * A plain Uint8Array of `length` bytes in its own memory, not zero-filled above a few KB (the caller writes every
 * byte); small ones the ordinary way, cheaper than a backing store of their own.
 */
function uninitializedBytes(length: number): Uint8Array {
  if (length < 4096) return new Uint8Array(length);
  const buffer = Buffer.allocUnsafeSlow(length);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, length);
}

function listPrefix(length: number): Uint8Array {
  if (length <= 55) return Uint8Array.of(0xc0 + length);
  const width: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) width.unshift(rest % 256);
  return Uint8Array.of(0xf7 + width.length, ...width);
}

/** Decodes `[request-id, [item, ...]]`; each item must be a list (headers, bodies, eth/69 receipt lists). */
export function decodeItemsResponse(bytes: Uint8Array, subject: string): ItemsResponse {
  const r = new Reader(bytes, subject);
  const [id, list] = r.fields(r.whole(), [2]);
  const items = r.children(list!).map((span) => {
    if (!span.list) throw new RlpDecodeError(subject, 'expected each item to be an RLP list');
    return r.slice(span);
  });
  return { requestId: r.uint(id!, 'request-id'), items };
}

/**
 * eth/68 Receipts: `[request-id, [[receipt, ...], ...]]` with consensus-encoded receipts. Returns each block's
 * receipts in the stored eth/69 form (the bloom is dropped: the node recomputes it from the logs when verifying).
 */
export function decodeEth68Receipts(bytes: Uint8Array): ItemsResponse {
  const subject = 'eth/68 Receipts';
  const r = new Reader(bytes, subject);
  const [id, list] = r.fields(r.whole(), [2]);
  const items = r.children(list!).map((blockSpan) => {
    const receipts = r.children(blockSpan).map((span) => decodeReceipt(span.list ? r.slice(span) : bytes.subarray(span.payload, span.end)));
    return encodeEth69Receipts(receipts);
  });
  return { requestId: r.uint(id!, 'request-id'), items };
}

/** eth/68 Receipts: each block's receipts in consensus encoding (with the bloom); typed ones as byte strings. */
export function encodeEth68Receipts(requestId: bigint, blocks: readonly (readonly Receipt[])[]): Uint8Array {
  const items = blocks.map((receipts) => rawList(receipts.map((receipt) => {
    const consensus = encodeReceipt(receipt);
    return receipt.type === 'legacy' ? consensus : encodeRlp(consensus);
  })));
  return encodeItemsResponse({ requestId, items });
}

/** A list around items that are already RLP-encoded. */
export function rawList(items: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const item of items) length += item.length;
  const prefix = listPrefix(length);
  const out = uninitializedBytes(prefix.length + length);
  out.set(prefix, 0);
  let offset = prefix.length;
  for (const item of items) {
    out.set(item, offset);
    offset += item.length;
  }
  return out;
}

/** Reads the first list item of a message to learn its request id (for answers that do not decode). */
export function peekRequestId(bytes: Uint8Array): bigint | null {
  try {
    const whole = rlpWhole(bytes, 'eth message');
    if (!whole.list) return null;
    const first = rlpSpan(bytes, whole.payload, whole.end, 'eth message');
    return rlpUint(bytes, first, 'eth message', 'request-id', 8);
  } catch {
    return null;
  }
}
