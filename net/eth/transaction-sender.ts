/** The sender of a signed transaction, recovered from its signature over the type's signing hash. */
import type { Address } from './hex.js';
import { recoverAddress } from './signature.js';
import { transactionSigningHash } from './transaction-encode.js';
import type { Transaction } from './transaction-types.js';

/**
 * Throws `InvalidSignatureError` when the signature recovers no key. Any `s` in range recovers: the Homestead low-s
 * rule is a validity rule of execution, not of the format.
 */
export function recoverTransactionSender(tx: Transaction): Address {
  return recoverAddress(transactionSigningHash(tx), tx);
}
