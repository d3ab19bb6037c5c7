/** Blocks acquired from peers as the pool's verification tasks (`actors/node/tasks.ts`) take them, and their outcomes back. */
import type { AcquiredBlock } from '../../net/p2p/acquire.js';
import type { BlockMaterialOutcome } from '../node/tasks.js';
import type { BlockMaterialBytes } from '../../net/eth/verify-material.js';

/** A block as `verifyBlockMaterial` and `verifyBlockMaterials` take it. */
export function materialInput(block: AcquiredBlock): BlockMaterialBytes {
  return { header: block.header, body: block.body, ...(block.receipts ? { receipts: block.receipts } : {}), expectedHash: block.hash };
}

/** The outcomes of `verifyBlockMaterials` as `acquireStep`'s `verifyBatch` returns them (null: verified). */
export function batchOutcomes(outcomes: readonly BlockMaterialOutcome[]): (Error | null)[] {
  return outcomes.map((outcome) => (outcome.ok ? null : Object.assign(new Error(outcome.message), { name: outcome.name })));
}
