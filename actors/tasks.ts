/**
 * CPU tasks run on the node's piscina pool (runtime/pool.ts): pure functions over bytes, named
 * by their export. Inputs and outputs are structured-clone values.
 */
import { decodeBlockBody } from '../net/eth/block.js';
import { decodeHeader } from '../net/eth/header.js';
import { decodeEth69Receipts } from '../net/eth/receipt.js';
import { verifyBlock } from '../net/eth/verify-block.js';
import type { Hash } from '../net/eth/hex.js';

export interface BlockMaterialInput {
  readonly header: Uint8Array;
  readonly body: Uint8Array;
  /** Receipts in the eth/69 storage shape, when the source has them. */
  readonly receipts?: Uint8Array;
  readonly expectedHash?: Hash | undefined;
}

/** Decodes a block's material and verifies it against its header (hash, roots, bloom); throws a BlockVerificationError naming the mismatch. */
export async function verifyBlockMaterial(input: BlockMaterialInput): Promise<{ hash: Hash; number: number }> {
  const header = decodeHeader(input.header);
  const body = decodeBlockBody(input.body);
  const receipts = input.receipts ? decodeEth69Receipts(input.receipts) : undefined;
  const verified = await verifyBlock({ header, ...body, ...(receipts ? { receipts } : {}), ...(input.expectedHash ? { expectedHash: input.expectedHash } : {}) });
  return { hash: verified.hash, number: header.number };
}
