/** Uniswap V2 constant-product pricing with its 0.3 % fee, as the devnet's pools apply it. */

/** `getAmountOut` of UniswapV2Library: what `amountIn` buys from reserves `reserveIn`/`reserveOut`. */
export function amountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint): bigint {
  if (amountIn <= 0n || reserveIn <= 0n || reserveOut <= 0n) return 0n;
  const amountInWithFee = amountIn * 997n;
  return (amountInWithFee * reserveOut) / (reserveIn * 1000n + amountInWithFee);
}
