/**
 * Block 1's setup, sent by account 0: each token mints its initial balance to every account and its initial
 * reserve to the pools holding it (`Transfer` from the zero address), then each pool's `sync()` emits its first
 * `Sync`. From here on token balances and reserves only move by logged transfers and swaps.
 */
import { addresses, encodeCall, functionSelector, uints } from './abi.js';
import type { BlockContext, TransactionDraft } from './block-context.js';
import { poolHolder } from './chain-state.js';
import { DEVNET_CONTRACTS, INITIAL_ACCOUNT_TOKEN_BALANCE } from './contracts.js';
import { syncLog, transferLog } from './events.js';
import { feeMarketFields } from './fees.js';
import { ZERO_ADDRESS } from './header-fields.js';
import { mintGas, POOL_SYNC_GAS } from './setup-gas.js';

const MINT_SELECTOR = functionSelector('mint(address[],uint256[])');
const SYNC_SELECTOR = functionSelector('sync()');
const DEPLOYER = 0;

function draftMint(ctx: BlockContext, token: number): TransactionDraft {
  const tokenAddress = DEVNET_CONTRACTS.tokens[token]!;
  const holders: number[] = ctx.accounts.map((_, i) => i);
  const recipients = ctx.accounts.map((account) => account.address);
  const amounts = recipients.map(() => INITIAL_ACCOUNT_TOKEN_BALANCE);
  DEVNET_CONTRACTS.pools.forEach((pool, index) => {
    if (pool.token0 !== tokenAddress && pool.token1 !== tokenAddress) return;
    holders.push(poolHolder(ctx.state, index));
    recipients.push(pool.address);
    amounts.push(pool.token0 === tokenAddress ? pool.initialReserve0 : pool.initialReserve1);
  });
  const gasUsed = mintGas(recipients.length);
  return {
    senderIndex: DEPLOYER,
    unsigned: {
      type: 'eip1559', chainId: ctx.chainId, nonce: ctx.state.nonces[DEPLOYER]!, ...feeMarketFields(ctx), gas: gasUsed,
      to: tokenAddress, value: 0n, input: encodeCall(MINT_SELECTOR, [addresses(recipients), uints(amounts)]), accessList: [],
    },
    gasUsed,
    status: 'success',
    logs: recipients.map((to, i) => transferLog(tokenAddress, ZERO_ADDRESS, to, amounts[i]!)),
    apply: (state) => holders.forEach((holder, i) => (state.tokenBalances[token]![holder]! += amounts[i]!)),
  };
}

function draftSync(ctx: BlockContext, poolIndex: number): TransactionDraft {
  const pool = DEVNET_CONTRACTS.pools[poolIndex]!;
  const holder = poolHolder(ctx.state, poolIndex);
  const reserve0 = ctx.state.tokenBalances[DEVNET_CONTRACTS.tokens.indexOf(pool.token0)]![holder]!;
  const reserve1 = ctx.state.tokenBalances[DEVNET_CONTRACTS.tokens.indexOf(pool.token1)]![holder]!;
  return {
    senderIndex: DEPLOYER,
    unsigned: {
      type: 'eip1559', chainId: ctx.chainId, nonce: ctx.state.nonces[DEPLOYER]!, ...feeMarketFields(ctx), gas: POOL_SYNC_GAS,
      to: pool.address, value: 0n, input: encodeCall(SYNC_SELECTOR, []), accessList: [],
    },
    gasUsed: POOL_SYNC_GAS,
    status: 'success',
    logs: [syncLog(pool.address, reserve0, reserve1)],
    apply: (state) => {
      state.reserves[poolIndex] = [reserve0, reserve1];
    },
  };
}

/** The setup drafts in order; each must be drafted after the previous one was applied. */
export const SETUP_DRAFTERS: readonly ((ctx: BlockContext) => TransactionDraft)[] = [
  ...DEVNET_CONTRACTS.tokens.map((_, token) => (ctx: BlockContext) => draftMint(ctx, token)),
  ...DEVNET_CONTRACTS.pools.map((_, pool) => (ctx: BlockContext) => draftSync(ctx, pool)),
];
