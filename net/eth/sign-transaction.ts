/** Signing: turns an unsigned transaction into a signed one (deterministic, RFC 6979), as the devnet needs. */
import { signHash, type PrivateKey } from './signature.js';
import { transactionSigningHash } from './transaction-encode.js';
import type { Transaction, UnsignedTransaction } from './transaction-types.js';

export function signTransaction(tx: UnsignedTransaction, privateKey: PrivateKey): Transaction {
  const signature = signHash(transactionSigningHash(tx), privateKey);
  return { ...tx, ...signature } as Transaction;
}
