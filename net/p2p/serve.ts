/**
 * Answers a peer's `eth` requests from a chain reader: GetBlockHeaders (by number or hash, skip, reverse, along the
 * canonical chain), GetBlockBodies and GetReceipts (by hash, any recorded branch), with geth's soft limits (1024
 * items, about 2 MiB per answer). Unknown blocks end a header walk and are left out of body and receipt answers,
 * as the protocol allows.
 */
import { decodeEth69Receipts } from '../eth/receipt.js';
import type { Hash } from '../eth/hex.js';
import { encodeEth68Receipts, encodeItemsResponse, type GetBlockHeaders, type HashesRequest, type EthVersion } from './eth-messages.js';
import type { EthRequestHandler } from './session.js';

export interface ChainReader {
  /** Header RLP of the canonical block at `number`. */
  canonicalHeader(number: number): Uint8Array | undefined;
  /** Number of a recorded block by hash (any branch). */
  numberOf(hash: Hash): number | undefined;
  headerByHash(hash: Hash): Uint8Array | undefined;
  /** Body RLP `[transactions, uncles, withdrawals?]`. */
  bodyByHash(hash: Hash): Uint8Array | undefined;
  /** eth/69 receipts list RLP. */
  receiptsByHash(hash: Hash): Uint8Array | undefined;
}

export const MAX_SERVED_ITEMS = 1024;
export const SOFT_RESPONSE_BYTES = 2 * 1024 * 1024;

function headers(reader: ChainReader, request: GetBlockHeaders): Uint8Array {
  const items: Uint8Array[] = [];
  let number = 'hash' in request.origin ? reader.numberOf(request.origin.hash) : request.origin.number;
  if ('hash' in request.origin && number !== undefined) {
    // A hash origin on a side branch is served by itself only: the walk follows the canonical chain.
    const first = reader.headerByHash(request.origin.hash);
    const canonical = reader.canonicalHeader(number);
    if (first && (!canonical || !Buffer.from(first).equals(Buffer.from(canonical)))) return encodeItemsResponse({ requestId: request.requestId, items: [first] });
  }
  const limit = Math.min(request.limit, MAX_SERVED_ITEMS);
  let bytes = 0;
  while (number !== undefined && number >= 0 && items.length < limit && bytes < SOFT_RESPONSE_BYTES) {
    const header = reader.canonicalHeader(number);
    if (!header) break;
    items.push(header);
    bytes += header.length;
    number = request.reverse ? number - (request.skip + 1) : number + request.skip + 1;
  }
  return encodeItemsResponse({ requestId: request.requestId, items });
}

function collect(request: HashesRequest, read: (hash: Hash) => Uint8Array | undefined): Uint8Array[] {
  const items: Uint8Array[] = [];
  let bytes = 0;
  for (const hash of request.hashes.slice(0, MAX_SERVED_ITEMS)) {
    if (bytes >= SOFT_RESPONSE_BYTES) break;
    const item = read(hash);
    if (!item) continue;
    items.push(item);
    bytes += item.length;
  }
  return items;
}

export function chainRequestHandler(reader: ChainReader): EthRequestHandler {
  return {
    headers: (request) => headers(reader, request),
    bodies: (request) => encodeItemsResponse({ requestId: request.requestId, items: collect(request, (hash) => reader.bodyByHash(hash)) }),
    receipts: (request, version: EthVersion) => {
      const lists = collect(request, (hash) => reader.receiptsByHash(hash));
      if (version === 69) return encodeItemsResponse({ requestId: request.requestId, items: lists });
      return encodeEth68Receipts(request.requestId, lists.map((list) => decodeEth69Receipts(list)));
    },
  };
}
