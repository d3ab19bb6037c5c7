/**
 * The transactions of an encoded block body `[transactions, uncles, withdrawals?]` without decoding them: each one's
 * canonical encoding as a slice of the body (a typed transaction's byte string, a legacy one's RLP list; the walk
 * enforces canonical RLP, so a slice is exactly what encoding the decoded transaction gives), and their hashes —
 * keccak256 of those bytes, hashed in one batch.
 */
import { keccak256Many } from './keccak-batch.js';
import { rlpChildren, rlpFields, rlpWhole } from './rlp-walk.js';

export function bodyTransactionEncodings(body: Uint8Array): Uint8Array[] {
  const subject = 'block body';
  const [transactions] = rlpFields(body, rlpWhole(body, subject), subject, [2, 3]);
  return rlpChildren(body, transactions!, subject).map((span) => (span.list ? body.subarray(span.offset, span.end) : body.subarray(span.payload, span.end)));
}

export function transactionHashesOfBody(body: Uint8Array): Uint8Array[] {
  return keccak256Many(bodyTransactionEncodings(body));
}
