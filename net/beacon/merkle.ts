/** SSZ Merkle proofs as the consensus specs check them (`is_valid_merkle_branch`, its normalized form, generalized indices). */
import { sha256 } from '@noble/hashes/sha2.js';

export function floorLog2(value: number): number {
  return 31 - Math.clz32(value);
}

/** `get_subtree_index`: the position of a generalized index within its depth. */
export function subtreeIndex(gindex: number): number {
  return gindex % 2 ** floorLog2(gindex);
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function isZero(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

function hashPair(left: Uint8Array, right: Uint8Array): Uint8Array {
  const joined = new Uint8Array(64);
  joined.set(left, 0);
  joined.set(right, 32);
  return sha256(joined);
}

export function isValidMerkleBranch(leaf: Uint8Array, branch: readonly Uint8Array[], depth: number, index: number, root: Uint8Array): boolean {
  if (branch.length !== depth) return false;
  let value = leaf;
  for (let i = 0; i < depth; i++) {
    value = Math.floor(index / 2 ** i) % 2 === 1 ? hashPair(branch[i]!, value) : hashPair(value, branch[i]!);
  }
  return bytesEqual(value, root);
}

/** `is_valid_normalized_merkle_branch`: a branch longer than the gindex's depth must lead with zero hashes. */
export function isValidNormalizedMerkleBranch(leaf: Uint8Array, branch: readonly Uint8Array[], gindex: number, root: Uint8Array): boolean {
  const depth = floorLog2(gindex);
  const extra = branch.length - depth;
  if (extra < 0) return false;
  for (let i = 0; i < extra; i++) if (!isZero(branch[i]!)) return false;
  return isValidMerkleBranch(leaf, branch.slice(extra), depth, subtreeIndex(gindex), root);
}
