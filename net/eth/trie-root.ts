/**
 * Ordered trie roots (transactions, receipts, withdrawals): a Merkle Patricia trie keyed by `rlp(index)` holding
 * each item's encoding, built in one pass over the keys in byte order (`ordered-trie.ts`). The functions stay
 * async for their callers; the work inside is synchronous (about a millisecond for a few hundred items).
 */
import { bytesToHex, type Hash } from './hex.js';
import { HashPlan } from './keccak-batch.js';
import { toNibbles } from './ordered-trie.js';
import { encodeReceipt, type Receipt } from './receipt.js';
import { encodeRlp } from './rlp.js';
import { encodeTransaction } from './transaction-encode.js';
import { planSortedPaths } from './trie-plan.js';
import type { Transaction } from './transaction-types.js';
import { encodeWithdrawal, type Withdrawal } from './withdrawal.js';

/** Root of the empty trie: keccak256(rlp('')). */
export const EMPTY_TRIE_ROOT: Hash = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

/** Indexes `0…count-1` in the byte order of `rlp(index)`: 1…127 (one byte each), then 0 (`0x80`), then 128 on. */
function indexesInKeyOrder(count: number): number[] {
  const order: number[] = [];
  for (let index = 1; index < Math.min(count, 128); index++) order.push(index);
  if (count > 0) order.push(0);
  for (let index = 128; index < count; index++) order.push(index);
  return order;
}

/**
 * The key order and nibble paths of a trie of `count` items, kept for recent counts (blocks repeat their transaction
 * counts; a few hundred counts of a few hundred entries each at most, then the cache starts over).
 */
const keyOrders = new Map<number, { order: number[]; paths: Uint8Array[] }>();
const KEY_ORDER_COUNTS = 256;

function keyOrder(count: number): { order: number[]; paths: Uint8Array[] } {
  let entry = keyOrders.get(count);
  if (entry === undefined) {
    const order = indexesInKeyOrder(count);
    entry = { order, paths: order.map(indexPath) };
    if (keyOrders.size >= KEY_ORDER_COUNTS) keyOrders.clear();
    keyOrders.set(count, entry);
  }
  return entry;
}

/** The nibble path of `rlp(i)` for every index seen so far, kept (a few bytes each; as many as the largest block has items). */
const indexPaths: Uint8Array[] = [];

function indexPath(index: number): Uint8Array {
  for (let i = indexPaths.length; i <= index; i++) indexPaths.push(toNibbles(encodeRlp(BigInt(i))));
  return indexPaths[index]!;
}

/**
 * Plans the root of a trie mapping `rlp(i)` to `values[i]` into `plan` (`trie-plan.ts`); returns the arena offset
 * where `plan.run()` puts it. Several tries planned into one plan are hashed together, level by level.
 */
export function planOrderedTrie(plan: HashPlan, values: readonly Uint8Array[]): number {
  const { order, paths } = keyOrder(values.length);
  const ordered = order.map((index) => {
    const value = values[index]!;
    if (value.length === 0) throw new RangeError(`trie value ${index} is empty; an ordered trie holds no empty value`);
    return value;
  });
  return planSortedPaths(plan, paths, ordered);
}

const plan = new HashPlan();

/** Root of a trie mapping `rlp(i)` to `values[i]`. */
export function orderedTrieRootSync(values: readonly Uint8Array[]): Hash {
  if (values.length === 0) return EMPTY_TRIE_ROOT;
  plan.reset();
  const root = planOrderedTrie(plan, values);
  plan.run();
  return bytesToHex(plan.hashAt(root));
}

/** Roots of several ordered tries (`orderedTrieRootSync` of each), hashed in one batch. */
export function orderedTrieRootsSync(valueLists: readonly (readonly Uint8Array[])[]): Hash[] {
  plan.reset();
  const roots = valueLists.map((values) => planOrderedTrie(plan, values));
  plan.run();
  return roots.map((root) => bytesToHex(plan.hashAt(root)));
}

export async function orderedTrieRoot(values: readonly Uint8Array[]): Promise<Hash> {
  return orderedTrieRootSync(values);
}

export async function transactionsRoot(transactions: readonly Transaction[]): Promise<Hash> {
  return orderedTrieRootSync(transactions.map(encodeTransaction));
}

export async function receiptsRoot(receipts: readonly Receipt[]): Promise<Hash> {
  return orderedTrieRootSync(receipts.map(encodeReceipt));
}

export async function withdrawalsRoot(withdrawals: readonly Withdrawal[]): Promise<Hash> {
  return orderedTrieRootSync(withdrawals.map(encodeWithdrawal));
}
