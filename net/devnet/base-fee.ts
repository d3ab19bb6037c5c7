/**
 * The EIP-1559 base fee of a child block from its parent (elasticity 2, change denominator 8). `net/eth` verifies
 * formats, not execution rules, so the producer side of this rule lives with the only producer, the devnet.
 */
import type { BlockHeader } from '../eth/index.js';

const ELASTICITY_MULTIPLIER = 2n;
const BASE_FEE_CHANGE_DENOMINATOR = 8n;

export function nextBaseFee(parent: Pick<BlockHeader, 'gasLimit' | 'gasUsed' | 'baseFeePerGas'>): bigint {
  const parentBaseFee = parent.baseFeePerGas;
  if (parentBaseFee === undefined) throw new RangeError('nextBaseFee needs a London (or later) parent header');
  const target = parent.gasLimit / ELASTICITY_MULTIPLIER;
  if (parent.gasUsed === target) return parentBaseFee;
  if (parent.gasUsed > target) {
    const delta = (parentBaseFee * (parent.gasUsed - target)) / target / BASE_FEE_CHANGE_DENOMINATOR;
    return parentBaseFee + (delta > 1n ? delta : 1n);
  }
  return parentBaseFee - (parentBaseFee * (target - parent.gasUsed)) / target / BASE_FEE_CHANGE_DENOMINATOR;
}
