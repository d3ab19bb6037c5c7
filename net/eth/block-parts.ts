/**
 * A block's RLP `[header, transactions, uncles, withdrawals?]` cut into the header RLP and the body RLP
 * `[transactions, uncles, withdrawals?]` the chain tables store, without decoding: the header is the first item,
 * the body is the remaining items under a new list prefix. `joinBlockRlp` is the inverse.
 */
import { RlpDecodeError } from './errors.js';
import { rlpItemLength } from './rlp.js';
import { listPrefixLength, writeListPrefix } from './rlp-walk.js';

export interface BlockParts {
  header: Uint8Array;
  body: Uint8Array;
}

function listPayloadOffset(bytes: Uint8Array): number {
  const first = bytes[0];
  if (first === undefined || first < 0xc0) throw new RlpDecodeError('block', 'expected an RLP list');
  if (rlpItemLength(bytes, 0, 'block') !== bytes.length) throw new RlpDecodeError('block', 'the list does not span the whole input');
  return first < 0xf8 ? 1 : 1 + (first - 0xf7);
}

function listPrefix(payloadLength: number): Uint8Array {
  if (payloadLength <= 55) return Uint8Array.of(0xc0 + payloadLength);
  const width: number[] = [];
  for (let rest = payloadLength; rest > 0; rest = Math.floor(rest / 256)) width.unshift(rest % 256);
  return Uint8Array.of(0xf7 + width.length, ...width);
}

export function splitBlockRlp(block: Uint8Array): BlockParts {
  const headerStart = listPayloadOffset(block);
  const headerEnd = headerStart + rlpItemLength(block, headerStart, 'block header');
  const items = block.subarray(headerEnd);
  const prefix = listPrefix(items.length);
  const body = new Uint8Array(prefix.length + items.length);
  body.set(prefix);
  body.set(items, prefix.length);
  return { header: block.slice(headerStart, headerEnd), body };
}

/** The block's RLP from its stored header and body RLP: the body's items after the header, under one list prefix. */
export function joinBlockRlp(header: Uint8Array, body: Uint8Array): Uint8Array {
  const items = body.subarray(listPayloadOffset(body));
  const payload = header.length + items.length;
  const block = new Uint8Array(listPrefixLength(payload) + payload);
  const at = writeListPrefix(block, 0, payload);
  block.set(header, at);
  block.set(items, at + header.length);
  return block;
}
