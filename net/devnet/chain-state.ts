/**
 * What the devnet remembers about the chain after a block, in place of an EVM state: nonces, token balances, pool
 * reserves and the withdrawal index. Kept per retained block, so a reorg rebuilds its branch from the fork point.
 */

export interface ChainState {
  /** Next nonce of each sending account. */
  nonces: bigint[];
  /** Next nonce of each EIP-7702 authority (moved by its authorizations). */
  authorityNonces: bigint[];
  /** `tokenBalances[token][holder]`: holders are the accounts, then the pools (see `poolHolder`). */
  tokenBalances: bigint[][];
  /** `[reserve0, reserve1]` of each pool, always equal to the pool's token balances. */
  reserves: [bigint, bigint][];
  /** Index of the next withdrawal (EIP-4895 indexes count up across blocks). */
  withdrawalIndex: bigint;
}

export interface ChainShape {
  accounts: number;
  authorities: number;
  tokens: number;
  pools: number;
}

export function initialChainState(shape: ChainShape): ChainState {
  const holders = shape.accounts + shape.pools;
  return {
    nonces: new Array<bigint>(shape.accounts).fill(0n),
    authorityNonces: new Array<bigint>(shape.authorities).fill(0n),
    tokenBalances: Array.from({ length: shape.tokens }, () => new Array<bigint>(holders).fill(0n)),
    reserves: Array.from({ length: shape.pools }, (): [bigint, bigint] => [0n, 0n]),
    withdrawalIndex: 0n,
  };
}

export function cloneChainState(state: ChainState): ChainState {
  return {
    nonces: [...state.nonces],
    authorityNonces: [...state.authorityNonces],
    tokenBalances: state.tokenBalances.map((balances) => [...balances]),
    reserves: state.reserves.map(([r0, r1]): [bigint, bigint] => [r0, r1]),
    withdrawalIndex: state.withdrawalIndex,
  };
}

/** The holder index of pool `pool` in `tokenBalances`. */
export function poolHolder(state: ChainState, pool: number): number {
  return state.nonces.length + pool;
}

/** Moves `amount` of `token` between holders; the caller guarantees the balance suffices. */
export function moveTokens(state: ChainState, token: number, from: number, to: number, amount: bigint): void {
  const balances = state.tokenBalances[token]!;
  if (balances[from]! < amount) throw new RangeError(`devnet token ${token}: holder ${from} has ${balances[from]}, cannot move ${amount}`);
  balances[from]! -= amount;
  balances[to]! += amount;
}
