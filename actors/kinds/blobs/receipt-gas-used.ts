/** Gas used by each transaction of a block, from its receipts' running totals. */
import type { Receipt } from '../sdk/chain.js';
import { BlobsMaterialMismatchError, type BlockIdentity } from './errors.js';

/** Each receipt's cumulativeGasUsed minus the previous receipt's (the first counts from zero). */
export function gasUsedPerTransaction(receipts: readonly Pick<Receipt, 'cumulativeGasUsed'>[], block: BlockIdentity): bigint[] {
  const used: bigint[] = [];
  let previous = 0n;
  for (const [index, receipt] of receipts.entries()) {
    if (receipt.cumulativeGasUsed < previous) {
      throw new BlobsMaterialMismatchError(block, `receipt ${index} cumulativeGasUsed ${receipt.cumulativeGasUsed} is below the previous receipt's ${previous}`);
    }
    used.push(receipt.cumulativeGasUsed - previous);
    previous = receipt.cumulativeGasUsed;
  }
  return used;
}
