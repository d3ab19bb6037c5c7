/**
 * Checks of a header against its parent and the chain's fork schedule that need no state: increasing timestamp,
 * the header shape of the block's fork (London base fee, Shanghai withdrawals root, Cancun blob fields and beacon
 * root, Prague requests hash), the EIP-1559 base fee and the EIP-4844/7918 excess blob gas. The parent link itself
 * (hash, number) and the body roots are `verifyBlock`'s. Returns the first failure as text, or null.
 */
import { calcExcessBlobGas } from '../../net/eth/blob-fee.js';
import { blobParamsAt, isForkActive, type ForkName, type ForkSchedule } from '../../net/eth/fork-schedule.js';
import type { BlockHeader } from '../../net/eth/header.js';
import { nextBaseFee } from '../../net/devnet/base-fee.js';

const FORK_FIELDS: readonly (readonly [ForkName, readonly (keyof BlockHeader)[]])[] = [
  ['london', ['baseFeePerGas']],
  ['shanghai', ['withdrawalsRoot']],
  ['cancun', ['blobGasUsed', 'excessBlobGas', 'parentBeaconBlockRoot']],
  ['prague', ['requestsHash']],
];

export function headerLinkFailure(schedule: ForkSchedule, header: BlockHeader, parent: BlockHeader): string | null {
  if (header.timestamp <= parent.timestamp) return `timestamp ${header.timestamp} is not after its parent's ${parent.timestamp}`;
  const at = { number: header.number, timestamp: header.timestamp };
  for (const [fork, fields] of FORK_FIELDS) {
    const active = isForkActive(schedule, fork, at);
    for (const field of fields) {
      if (active && header[field] === undefined) return `${field} is missing, but ${fork} is active at this block`;
      if (!active && header[field] !== undefined) return `${field} is present, but ${fork} is not active at this block (check the genesis file's fork schedule)`;
    }
  }
  if (header.baseFeePerGas !== undefined && parent.baseFeePerGas !== undefined) {
    const expected = nextBaseFee(parent);
    if (header.baseFeePerGas !== expected) return `baseFeePerGas ${header.baseFeePerGas}, expected ${expected} from the parent`;
  }
  const blob = blobParamsAt(schedule, at);
  if (blob !== undefined && header.excessBlobGas !== undefined) {
    const expected = calcExcessBlobGas(parent, blob);
    if (header.excessBlobGas !== expected) return `excessBlobGas ${header.excessBlobGas}, expected ${expected} from the parent under this fork's blob parameters`;
  }
  return null;
}
