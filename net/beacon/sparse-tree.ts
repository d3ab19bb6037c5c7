/**
 * A Merkle tree given by a few nodes at generalized indices (everything else zero leaves at the
 * tree's depth): its root and the branch of any listed node. What a test or the devnet needs to
 * produce a state or block body root with real proofs without building the whole container.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { floorLog2 } from './merkle.js';

export class SparseTree {
  private readonly cache = new Map<number, Uint8Array>();

  constructor(private readonly depth: number, private readonly nodes: ReadonlyMap<number, Uint8Array>) {}

  node(gindex: number): Uint8Array {
    const given = this.nodes.get(gindex);
    if (given) return given;
    const cached = this.cache.get(gindex);
    if (cached) return cached;
    let value: Uint8Array;
    if (floorLog2(gindex) >= this.depth) value = new Uint8Array(32);
    else {
      const joined = new Uint8Array(64);
      joined.set(this.node(2 * gindex), 0);
      joined.set(this.node(2 * gindex + 1), 32);
      value = sha256(joined);
    }
    this.cache.set(gindex, value);
    return value;
  }

  root(): Uint8Array {
    return this.node(1);
  }

  /** Siblings from the node up to the root (the order `is_valid_merkle_branch` reads them). */
  branch(gindex: number): Uint8Array[] {
    const siblings: Uint8Array[] = [];
    for (let g = gindex; g > 1; g = Math.floor(g / 2)) siblings.push(this.node(g ^ 1));
    return siblings;
  }
}

/** A uint64 as an SSZ leaf chunk (little-endian, zero-padded to 32 bytes). */
export function uint64Leaf(value: number): Uint8Array {
  const leaf = new Uint8Array(32);
  new DataView(leaf.buffer).setBigUint64(0, BigInt(value), true);
  return leaf;
}
