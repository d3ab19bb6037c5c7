/**
 * The transactions root anvil (≤ 1.7.1, foundry-rs/foundry#15132) commits to: blob transactions in their pooled
 * network form `0x03 || rlp([payload, blobs, commitments, proofs])` instead of the canonical `0x03 || rlp(payload)`.
 * The pooled form embeds the canonical payload, so a matching root still proves every transaction field; it only
 * differs in the wrapper. Used solely when the source opts in (`pooledBlobRoots`), for such dev chains.
 */
import { concatBytes, hexToBytes, type Hash } from '../eth/hex.js';
import { decodeRlp, encodeRlp, type RlpInput } from '../eth/rlp.js';
import { encodeTransaction } from '../eth/transaction-encode.js';
import type { Transaction } from '../eth/transaction-types.js';
import { orderedTrieRoot } from '../eth/trie-root.js';
import { JsonFields } from './json-fields.js';

/** The pooled-form root, or null when a blob transaction's JSON carries no sidecar to rebuild it from. */
export async function pooledTransactionsRoot(transactionsJson: readonly unknown[], transactions: readonly Transaction[]): Promise<Hash | null> {
  const leaves: Uint8Array[] = [];
  for (const [i, tx] of transactions.entries()) {
    const canonical = encodeTransaction(tx);
    if (tx.type !== 'eip4844') {
      leaves.push(canonical);
      continue;
    }
    const f = new JsonFields(transactionsJson[i], `transaction ${i}`);
    if (!f.has('blobs') || !f.has('commitments') || !f.has('proofs')) return null;
    const sidecar = (name: string): RlpInput[] => f.list(name).map((item) => hexToBytes(String(item)));
    const payload = decodeRlp(canonical.subarray(1), `transaction ${i}`);
    leaves.push(concatBytes(Uint8Array.of(0x03), encodeRlp([payload, sidecar('blobs'), sidecar('commitments'), sidecar('proofs')])));
  }
  return orderedTrieRoot(leaves);
}
