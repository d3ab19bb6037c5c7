/** Gas of block 1's setup (one mint per token to every account and pool, one `sync()` per pool). */
import { DEVNET_CONTRACTS } from './contracts.js';

const MINT_GAS_BASE = 30_000n;
/** A fresh balance slot (22,100) plus the `Transfer` log and call overhead. */
const MINT_GAS_PER_RECIPIENT = 25_000n;
export const POOL_SYNC_GAS = 45_000n;

export function mintGas(recipients: number): bigint {
  return MINT_GAS_BASE + MINT_GAS_PER_RECIPIENT * BigInt(recipients);
}

/** Pools that hold `token` (they receive their initial reserve in its mint). */
export function poolsHolding(token: string): number {
  return DEVNET_CONTRACTS.pools.filter((pool) => pool.token0 === token || pool.token1 === token).length;
}

export function setupGas(accounts: number): bigint {
  let gas = POOL_SYNC_GAS * BigInt(DEVNET_CONTRACTS.pools.length);
  for (const token of DEVNET_CONTRACTS.tokens) gas += mintGas(accounts + poolsHolding(token));
  return gas;
}
