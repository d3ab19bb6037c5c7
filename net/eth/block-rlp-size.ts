/**
 * The RLP size of a block, `rlp([header, transactions, uncles, withdrawals?])`, from its stored header and body RLP
 * (`[transactions, uncles, withdrawals?]`) without re-encoding: the body's items are the block's items after the header.
 */
import { RlpDecodeError, rlpItemLength } from './index.js';

/** Bytes of an RLP list prefix for a payload of this length. */
function listPrefixLength(payloadLength: number): number {
  if (payloadLength <= 55) return 1;
  let lengthBytes = 0;
  for (let rest = payloadLength; rest > 0; rest = Math.floor(rest / 256)) lengthBytes += 1;
  return 1 + lengthBytes;
}

/** Prefix length of the RLP list that spans all of `bytes`. */
function wholeListPrefixLength(bytes: Uint8Array, subject: string): number {
  const first = bytes[0];
  if (first === undefined || first < 0xc0) throw new RlpDecodeError(subject, 'expected an RLP list');
  if (rlpItemLength(bytes, 0, subject) !== bytes.length) throw new RlpDecodeError(subject, 'the list does not span the whole input');
  return first < 0xf8 ? 1 : 1 + (first - 0xf7);
}

export function blockRlpSize(headerRlp: Uint8Array, bodyRlp: Uint8Array): number {
  wholeListPrefixLength(headerRlp, 'block header');
  const bodyItemsLength = bodyRlp.length - wholeListPrefixLength(bodyRlp, 'block body');
  const payloadLength = headerRlp.length + bodyItemsLength;
  return listPrefixLength(payloadLength) + payloadLength;
}
