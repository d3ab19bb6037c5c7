/**
 * The root of a Merkle Patricia trie built in one pass over its entries in key order. Sorted keys make every
 * subtrie a contiguous run of entries, so the trie is built bottom-up by splitting runs at their first differing
 * nibble: each node is encoded and hashed exactly once, where an insert-by-insert trie rehashes the whole path of
 * every insert.
 */
import { keccak256 } from './keccak.js';
import { HashPlan } from './keccak-batch.js';
import { planSortedPaths } from './trie-plan.js';
import { branchReference, extensionReference, leafReference } from './trie-node.js';

export interface TrieEntry {
  key: Uint8Array;
  value: Uint8Array;
}

export class UnsortedTrieKeysError extends Error {
  override readonly name = 'UnsortedTrieKeysError';
  constructor(position: number) {
    super(`trie entry ${position} does not sort strictly after entry ${position - 1}: give the entries sorted by key, without duplicates`);
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function toNibbles(key: Uint8Array): Uint8Array {
  const nibbles = new Uint8Array(key.length * 2);
  for (let i = 0; i < key.length; i++) {
    nibbles[2 * i] = key[i]! >> 4;
    nibbles[2 * i + 1] = key[i]! & 15;
  }
  return nibbles;
}

/** Entries `from`…`to - 1` share their first `depth` nibbles; the result is their subtrie's reference (its hash with `root`). */
function encodeRun(paths: readonly Uint8Array[], values: readonly Uint8Array[], from: number, to: number, depth: number, root: boolean): Uint8Array {
  const first = paths[from]!;
  if (to - from === 1) return leafReference(first, depth, first.length, values[from]!, root);
  const last = paths[to - 1]!;
  let shared = depth;
  while (shared < first.length && first[shared] === last[shared]) shared++;
  if (shared === depth) return encodeBranch(paths, values, from, to, depth, root);
  return extensionReference(first, depth, shared, encodeBranch(paths, values, from, to, shared, false), root);
}

function encodeBranch(paths: readonly Uint8Array[], values: readonly Uint8Array[], from: number, to: number, depth: number, root: boolean): Uint8Array {
  const children: (Uint8Array | undefined)[] = new Array(16);
  let value: Uint8Array | undefined;
  let start = from;
  if (paths[start]!.length === depth) value = values[start++];
  while (start < to) {
    const nibble = paths[start]![depth]!;
    let end = start + 1;
    while (end < to && paths[end]![depth] === nibble) end++;
    children[nibble] = encodeRun(paths, values, start, end, depth + 1, false);
    start = end;
  }
  return branchReference(children, value, root);
}

/**
 * keccak256 of the root node. Entries must be sorted by key, strictly (else `UnsortedTrieKeysError`), and values
 * non-empty (a trie holds no empty value: putting one deletes the key).
 */
export function sortedTrieRoot(entries: readonly TrieEntry[]): Uint8Array {
  if (entries.length === 0) return keccak256(Uint8Array.of(0x80));
  for (let i = 0; i < entries.length; i++) {
    if (entries[i]!.value.length === 0) throw new RangeError(`trie entry ${i} has an empty value; leave the key out instead`);
    if (i > 0 && compareBytes(entries[i - 1]!.key, entries[i]!.key) >= 0) throw new UnsortedTrieKeysError(i);
  }
  plan.reset();
  const root = planSortedPaths(plan, entries.map((entry) => toNibbles(entry.key)), entries.map((entry) => entry.value));
  plan.run();
  return plan.arena.slice(root, root + 32);
}

const plan = new HashPlan();

/**
 * `sortedTrieRoot` over keys already given as nibble paths, strictly sorted and with non-empty values (unchecked),
 * hashing node by node as it goes (`trie-plan.ts` plans the same trie for one batched hashing; this stays as the
 * reference it is tested and measured against).
 */
export function sortedPathsRoot(paths: readonly Uint8Array[], values: readonly Uint8Array[]): Uint8Array {
  if (paths.length === 0) return keccak256(Uint8Array.of(0x80));
  return encodeRun(paths, values, 0, paths.length, 0, true);
}

export { toNibbles };
