/**
 * CPU tasks run on the node's piscina pool (runtime/pool.ts): pure functions over bytes, named
 * by their export. Inputs and outputs are structured-clone values.
 */
import { verifyBlockMaterialBytes } from '../net/eth/verify-material.js';
import type { Hash } from '../net/eth/hex.js';

export interface BlockMaterialInput {
  readonly header: Uint8Array;
  readonly body: Uint8Array;
  /** Receipts in the eth/69 storage shape, when the source has them. */
  readonly receipts?: Uint8Array;
  readonly expectedHash?: Hash | undefined;
}

/**
 * Verifies a block's material against its header straight from the bytes (hash, roots, bloom, gas; see
 * net/eth/verify-material.ts); throws a BlockVerificationError naming the mismatch.
 */
export async function verifyBlockMaterial(input: BlockMaterialInput): Promise<{ hash: Hash; number: number }> {
  const verified = verifyBlockMaterialBytes(input);
  return { hash: verified.hash, number: verified.header.number };
}
