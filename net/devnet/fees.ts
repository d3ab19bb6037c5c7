/**
 * Envelopes and fee fields of devnet transactions: legacy (EIP-155), EIP-2930 and EIP-1559 for ordinary calls, each
 * paying at least the block's base fee; gas limits a wallet would estimate.
 */
import { bytesToHex, type AccessList, type Address, type Hex, type UnsignedTransaction } from '../eth/index.js';
import type { BlockContext } from './block-context.js';

export type Envelope = 'legacy' | 'eip2930' | 'eip1559';

export interface CallFields {
  nonce: bigint;
  gas: bigint;
  to: Address;
  value: bigint;
  input: Hex;
}

const GWEI = 1_000_000_000n;

/** Mostly EIP-1559, a fifth legacy, a few EIP-2930. */
export function pickEnvelope(ctx: BlockContext): Envelope {
  const roll = ctx.rng.float();
  return roll < 0.2 ? 'legacy' : roll < 0.25 ? 'eip2930' : 'eip1559';
}

export function priorityFee(ctx: BlockContext): bigint {
  return ctx.rng.bigintBetween(GWEI / 100n, 3n * GWEI);
}

/** EIP-1559 fee caps: a tip and room for the base fee to double. */
export function feeMarketFields(ctx: BlockContext): { maxPriorityFeePerGas: bigint; maxFeePerGas: bigint } {
  const maxPriorityFeePerGas = priorityFee(ctx);
  return { maxPriorityFeePerGas, maxFeePerGas: 2n * ctx.baseFee + maxPriorityFeePerGas };
}

function accessList(ctx: BlockContext, to: Address): AccessList {
  return [{ address: to, storageKeys: [bytesToHex(ctx.rng.bytes(32))] }];
}

export function unsignedCall(ctx: BlockContext, envelope: Envelope, fields: CallFields): UnsignedTransaction {
  const chainId = ctx.chainId;
  switch (envelope) {
    case 'legacy':
      return { type: 'legacy', chainId, gasPrice: ctx.baseFee + priorityFee(ctx), ...fields };
    case 'eip2930':
      return { type: 'eip2930', chainId, gasPrice: ctx.baseFee + priorityFee(ctx), accessList: accessList(ctx, fields.to), ...fields };
    case 'eip1559':
      return { type: 'eip1559', chainId, ...feeMarketFields(ctx), accessList: [], ...fields };
  }
}

/** A wallet-style gas limit: the gas used plus a 10–50 % margin, rounded up to a thousand. */
export function estimatedGasLimit(ctx: BlockContext, gasUsed: bigint): bigint {
  const margin = 110n + BigInt(ctx.rng.int(41));
  const padded = (gasUsed * margin) / 100n;
  return ((padded + 999n) / 1000n) * 1000n;
}
