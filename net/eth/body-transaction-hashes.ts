/**
 * The transaction hashes of an encoded block body `[transactions, uncles, withdrawals?]`, without decoding the
 * transactions: a typed transaction's hash is keccak256 of its canonical bytes (the body's byte string), a legacy
 * one's keccak256 of its RLP list.
 */
import { RlpDecodeError } from './errors.js';
import { keccak256 } from './keccak.js';
import { decodeRlpList, encodeRlp } from './rlp.js';

export function transactionHashesOfBody(body: Uint8Array): Uint8Array[] {
  const transactions = decodeRlpList(body, 'block body', [2, 3])[0];
  if (!Array.isArray(transactions)) throw new RlpDecodeError('block body', 'field transactions: expected a list');
  return transactions.map((item) => keccak256(Array.isArray(item) ? encodeRlp(item) : item));
}
