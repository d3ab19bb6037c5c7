/**
 * Ordered trie roots (transactions, receipts, withdrawals): a Merkle Patricia trie keyed by `rlp(index)` holding
 * each item's encoding, built in memory with `@ethereumjs/mpt`. Items go in by key order in chunks, yielding to the
 * event loop between chunks so a block with hundreds of transactions does not stall other work on the thread.
 */
import { createMPT } from '@ethereumjs/mpt';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { bytesToHex, type Hash } from './hex.js';
import { encodeReceipt, type Receipt } from './receipt.js';
import { encodeRlp } from './rlp.js';
import { encodeTransaction } from './transaction-encode.js';
import type { Transaction } from './transaction-types.js';
import { encodeWithdrawal, type Withdrawal } from './withdrawal.js';

/** Root of the empty trie: keccak256(rlp('')). */
export const EMPTY_TRIE_ROOT: Hash = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

/** Items inserted between two yields to the event loop (about 10 ms of hashing for typical transactions). */
const CHUNK = 64;

/** Root of a trie mapping `rlp(i)` to `values[i]`. */
export async function orderedTrieRoot(values: readonly Uint8Array[]): Promise<Hash> {
  if (values.length === 0) return EMPTY_TRIE_ROOT;
  const trie = await createMPT();
  const keys = values.map((_, index) => encodeRlp(BigInt(index)));
  const order = keys.map((_, index) => index).sort((a, b) => compareBytes(keys[a]!, keys[b]!));
  for (let start = 0; start < order.length; start += CHUNK) {
    if (start > 0) await yieldToEventLoop();
    const chunk = order.slice(start, start + CHUNK);
    await trie.batch(chunk.map((index) => ({ type: 'put' as const, key: keys[index]!, value: values[index]! })));
  }
  return bytesToHex(trie.root());
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

export function transactionsRoot(transactions: readonly Transaction[]): Promise<Hash> {
  return orderedTrieRoot(transactions.map(encodeTransaction));
}

export function receiptsRoot(receipts: readonly Receipt[]): Promise<Hash> {
  return orderedTrieRoot(receipts.map(encodeReceipt));
}

export function withdrawalsRoot(withdrawals: readonly Withdrawal[]): Promise<Hash> {
  return orderedTrieRoot(withdrawals.map(encodeWithdrawal));
}
