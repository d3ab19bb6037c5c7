/**
 * CPU tasks run on the node's piscina pool (runtime/pool.ts): pure functions over bytes, named
 * by their export. Inputs and outputs are structured-clone values.
 */
import { verifyBlockMaterialBytes, type BlockMaterialBytes } from '../../net/eth/verify-material.js';
import { convertRpcBatch as convertBatchBytes, type RpcBatchInput, type RpcBatchOutcome } from '../../net/history/rpc-batch.js';
import { movable } from '../../runtime/pool.js';
import type { Hash } from '../../net/eth/hex.js';

/**
 * An rpc history source's batch answer → verified, packed material (net/history/rpc-batch.ts). The answer's bytes
 * came transferred; the packed bytes go back transferred, or the answer's own bytes when the batch is refused.
 */
export async function convertRpcBatch(input: RpcBatchInput): Promise<RpcBatchOutcome> {
  const packed = await convertBatchBytes(input);
  if (packed === null) return movable({ refused: input.bytes }, [input.bytes]);
  return movable({ packed }, [packed.bytes]);
}

/**
 * Verifies a block's material against its header straight from the bytes (hash, roots, bloom, gas; see
 * net/eth/verify-material.ts); throws a BlockVerificationError naming the mismatch.
 */
export async function verifyBlockMaterial(input: BlockMaterialBytes): Promise<{ hash: Hash; number: number }> {
  const verified = verifyBlockMaterialBytes(input);
  return { hash: verified.hash, number: verified.header.number };
}

/** One block's outcome in `verifyBlockMaterials`: its hash and number, or why it failed (the error's name and message). */
export type BlockMaterialOutcome = { ok: true; hash: Hash; number: number } | { ok: false; name: string; message: string };

/**
 * `verifyBlockMaterial` over several blocks in one pool task (the blocks of one peer answer): one message each way
 * instead of one per block, whose fixed cost a profile of the p2p follower put above a copy of the block itself.
 * Each block is verified on its own; a failure is returned in its place, never thrown for the batch.
 */
export async function verifyBlockMaterials(inputs: readonly BlockMaterialBytes[]): Promise<BlockMaterialOutcome[]> {
  return inputs.map((input) => {
    try {
      const verified = verifyBlockMaterialBytes(input);
      return { ok: true, hash: verified.hash, number: verified.header.number };
    } catch (error) {
      const { name, message } = error instanceof Error ? error : new Error(String(error));
      return { ok: false, name, message };
    }
  });
}
