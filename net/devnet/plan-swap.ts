/**
 * Swaps through the router against a Uniswap-V2-shaped pool. Logs in the order the contracts emit them: the input
 * `Transfer` (router `transferFrom`, sender → pool), the output `Transfer` (pool → sender), `Sync` with the new
 * reserves, then `Swap` (sender = router). Reserves always equal the pool's token balances.
 */
import { address, addresses, encodeCall, functionSelector, uint } from './abi.js';
import { amountOut } from './amm.js';
import { accountAddress, NO_STATE_CHANGE, type BlockContext, type TransactionDraft } from './block-context.js';
import { moveTokens, poolHolder } from './chain-state.js';
import { DEVNET_CONTRACTS } from './contracts.js';
import { swapLog, syncLog, transferLog } from './events.js';
import { estimatedGasLimit, pickEnvelope, unsignedCall } from './fees.js';

const SWAP_SELECTOR = functionSelector('swapExactTokensForTokens(uint256,uint256,address[],address,uint256)');
/** A swap never moves more than 1/50 of the input reserve, so pools stay deep. */
const MAX_RESERVE_SHARE = 50n;
const DEADLINE_SECONDS = 600n;

/** Undefined when the sender cannot pay a meaningful amount (the planner then drafts something else). */
export function draftSwap(ctx: BlockContext, sender: number): TransactionDraft | undefined {
  const poolIndex = ctx.rng.int(DEVNET_CONTRACTS.pools.length);
  const pool = DEVNET_CONTRACTS.pools[poolIndex]!;
  const zeroForOne = ctx.rng.chance(0.5);
  const [tokenIn, tokenOut] = zeroForOne ? [pool.token0, pool.token1] : [pool.token1, pool.token0];
  const tokenInIndex = DEVNET_CONTRACTS.tokens.indexOf(tokenIn);
  const tokenOutIndex = DEVNET_CONTRACTS.tokens.indexOf(tokenOut);
  const [reserve0, reserve1] = ctx.state.reserves[poolIndex]!;
  const [reserveIn, reserveOut] = zeroForOne ? [reserve0, reserve1] : [reserve1, reserve0];
  const balance = ctx.state.tokenBalances[tokenInIndex]![sender]!;
  const cap = balance / 4n < reserveIn / MAX_RESERVE_SHARE ? balance / 4n : reserveIn / MAX_RESERVE_SHARE;
  if (cap < 1000n) return undefined;
  const amountIn = ctx.rng.bigintBetween(cap / 100n + 1n, cap);
  const out = amountOut(amountIn, reserveIn, reserveOut);
  if (out === 0n) return undefined;

  const senderAddress = accountAddress(ctx, sender);
  const reverted = ctx.rng.chance(0.03);
  const gasUsed = BigInt(reverted ? ctx.rng.between(40_000, 60_000) : ctx.rng.between(95_000, 150_000));
  const input = encodeCall(SWAP_SELECTOR, [
    uint(amountIn), uint((out * 99n) / 100n), addresses([tokenIn, tokenOut]), address(senderAddress), uint(BigInt(ctx.timestamp) + DEADLINE_SECONDS),
  ]);
  const fields = { nonce: ctx.state.nonces[sender]!, gas: estimatedGasLimit(ctx, gasUsed), to: DEVNET_CONTRACTS.router, value: 0n, input };
  const unsigned = unsignedCall(ctx, pickEnvelope(ctx), fields);
  if (reverted) return { senderIndex: sender, unsigned, gasUsed, status: 'reverted', logs: [], apply: NO_STATE_CHANGE };

  const newReserves: [bigint, bigint] = zeroForOne ? [reserve0 + amountIn, reserve1 - out] : [reserve0 - out, reserve1 + amountIn];
  const amounts = zeroForOne
    ? { amount0In: amountIn, amount1In: 0n, amount0Out: 0n, amount1Out: out }
    : { amount0In: 0n, amount1In: amountIn, amount0Out: out, amount1Out: 0n };
  return {
    senderIndex: sender,
    unsigned,
    gasUsed,
    status: 'success',
    logs: [
      transferLog(tokenIn, senderAddress, pool.address, amountIn),
      transferLog(tokenOut, pool.address, senderAddress, out),
      syncLog(pool.address, newReserves[0], newReserves[1]),
      swapLog(pool.address, DEVNET_CONTRACTS.router, amounts, senderAddress),
    ],
    apply: (state) => {
      const holder = poolHolder(state, poolIndex);
      moveTokens(state, tokenInIndex, sender, holder, amountIn);
      moveTokens(state, tokenOutIndex, holder, sender, out);
      state.reserves[poolIndex] = newReserves;
    },
  };
}
