/**
 * What a typed transaction's canonical encoding `type || rlp([...unsigned fields, yParity, r, s])` gives without
 * decoding it into an object and encoding it again: its hash (keccak256 of the encoding) and its signing hash
 * (keccak256 of `type || rlp([...unsigned fields])`, the same bytes with the last three fields cut and the list
 * prefix rewritten). Equal to `hashTransaction` / `transactionSigningHash` of the decoded transaction, because the
 * walk enforces canonical RLP (test/net/eth/transaction-raw.test.ts checks both on every fixture transaction).
 */
import { RlpDecodeError } from './errors.js';
import type { Hash } from './hex.js';
import { keccak256, keccak256Hex } from './keccak.js';
import { emptySpan, listPrefixLength, readRlpSpan, writeListPrefix } from './rlp-walk.js';

const SUBJECT = 'typed transaction';
const SIGNATURE_FIELDS = 3;
const span = emptySpan();
const field = emptySpan();

/** The transaction hash: keccak256 of the canonical encoding (typed or legacy). */
export function hashTransactionEncoding(encoding: Uint8Array): Hash {
  return keccak256Hex(encoding);
}

/** `type || rlp(unsigned fields)`: what the sender of a typed transaction signed. */
export function typedSigningPayload(encoding: Uint8Array): Uint8Array {
  const type = encoding[0];
  if (type === undefined || type > 0x7f) throw new RlpDecodeError(SUBJECT, 'expected a type byte (0x00…0x7f) first');
  readRlpSpan(span, encoding, 1, encoding.length, SUBJECT);
  if (!span.list) throw new RlpDecodeError(SUBJECT, 'expected an RLP list payload');
  if (span.end !== encoding.length) throw new RlpDecodeError(SUBJECT, `${encoding.length - span.end} bytes after the payload`);
  // Offsets where each field starts; the unsigned part ends where the third field from the end starts.
  const starts: number[] = [];
  for (let offset = span.payload; offset < span.end; offset = field.end) {
    starts.push(offset);
    readRlpSpan(field, encoding, offset, span.end, SUBJECT);
  }
  if (starts.length <= SIGNATURE_FIELDS) throw new RlpDecodeError(SUBJECT, `expected more than ${SIGNATURE_FIELDS} fields, got ${starts.length}`);
  const unsignedEnd = starts[starts.length - SIGNATURE_FIELDS]!;
  const unsignedLength = unsignedEnd - span.payload;
  const out = new Uint8Array(1 + listPrefixLength(unsignedLength) + unsignedLength);
  out[0] = type;
  out.set(encoding.subarray(span.payload, unsignedEnd), writeListPrefix(out, 1, unsignedLength));
  return out;
}

/** keccak256 of `typedSigningPayload`: the hash a typed transaction's signature is over. */
export function typedSigningHash(encoding: Uint8Array): Uint8Array {
  return keccak256(typedSigningPayload(encoding));
}
