/** A few EIP-4895 withdrawals per block: mostly partial (skimmed rewards), occasionally a full 32 ETH exit. */
import type { Address, Withdrawal } from '../eth/index.js';
import type { ChainState } from './chain-state.js';
import type { Prng } from './prng.js';

const MAX_WITHDRAWALS_PER_BLOCK = 4;
const VALIDATORS = 1_000_000;
const FULL_EXIT_GWEI = 32_000_000_000n;

/** Draws this block's withdrawals, advancing `state.withdrawalIndex`. */
export function drawWithdrawals(rng: Prng, state: ChainState, recipients: readonly Address[]): Withdrawal[] {
  const count = rng.int(MAX_WITHDRAWALS_PER_BLOCK + 1);
  const withdrawals: Withdrawal[] = [];
  for (let i = 0; i < count; i++) {
    withdrawals.push({
      index: state.withdrawalIndex,
      validatorIndex: BigInt(rng.int(VALIDATORS)),
      address: rng.pick(recipients),
      amount: rng.chance(0.02) ? FULL_EXIT_GWEI : rng.bigintBetween(10_000_000n, 60_000_000n),
    });
    state.withdrawalIndex += 1n;
  }
  return withdrawals;
}
