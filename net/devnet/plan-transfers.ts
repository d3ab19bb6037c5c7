/** Drafts of value transfers: plain ether, ERC-20 `transfer`, and `disperseToken` batches that fill blocks. */
import { bytesToHex, type Address } from '../eth/index.js';
import { address, addresses, encodeCall, functionSelector, uint, uints } from './abi.js';
import { accountAddress, NO_STATE_CHANGE, otherAccount, type BlockContext, type TransactionDraft } from './block-context.js';
import { moveTokens } from './chain-state.js';
import { DEVNET_CONTRACTS } from './contracts.js';
import { transferLog } from './events.js';
import { estimatedGasLimit, pickEnvelope, unsignedCall } from './fees.js';

export const TRANSFER_GAS = 21_000n;
const TRANSFER_SELECTOR = functionSelector('transfer(address,uint256)');
const DISPERSE_SELECTOR = functionSelector('disperseToken(address,address[],uint256[])');
const ETHER = 10n ** 18n;
/** Gas a batch spends per recipient; decides how many `Transfer` logs a filler carries (at most eight). */
const BATCH_GAS_PER_RECIPIENT = 30_000n;
const MAX_BATCH_RECIPIENTS = 8;

/** Ether to another devnet account or to a fresh address. */
export function draftEtherTransfer(ctx: BlockContext, sender: number): TransactionDraft {
  const to: Address = ctx.rng.chance(0.5) ? accountAddress(ctx, otherAccount(ctx, sender)) : bytesToHex(ctx.rng.bytes(20));
  const value = ctx.rng.bigintBetween(ETHER / 1000n, 2n * ETHER);
  const fields = { nonce: ctx.state.nonces[sender]!, gas: TRANSFER_GAS, to, value, input: '0x' as const };
  return { senderIndex: sender, unsigned: unsignedCall(ctx, pickEnvelope(ctx), fields), gasUsed: TRANSFER_GAS, status: 'success', logs: [], apply: NO_STATE_CHANGE };
}

/** ERC-20 `transfer` of up to a quarter of the sender's balance to another account; 2 % revert. */
export function draftTokenTransfer(ctx: BlockContext, sender: number): TransactionDraft | undefined {
  const token = ctx.rng.int(DEVNET_CONTRACTS.tokens.length);
  const balance = ctx.state.tokenBalances[token]![sender]!;
  if (balance < 4n) return undefined;
  const recipient = otherAccount(ctx, sender);
  const value = ctx.rng.bigintBetween(1n, balance / 4n);
  const tokenAddress = DEVNET_CONTRACTS.tokens[token]!;
  const reverted = ctx.rng.chance(0.02);
  const gasUsed = BigInt(reverted ? ctx.rng.between(23_000, 30_000) : ctx.rng.between(34_000, 52_000));
  const input = encodeCall(TRANSFER_SELECTOR, [address(accountAddress(ctx, recipient)), uint(value)]);
  const fields = { nonce: ctx.state.nonces[sender]!, gas: estimatedGasLimit(ctx, gasUsed), to: tokenAddress, value: 0n, input };
  const unsigned = unsignedCall(ctx, pickEnvelope(ctx), fields);
  if (reverted) return { senderIndex: sender, unsigned, gasUsed, status: 'reverted', logs: [], apply: NO_STATE_CHANGE };
  return {
    senderIndex: sender,
    unsigned,
    gasUsed,
    status: 'success',
    logs: [transferLog(tokenAddress, accountAddress(ctx, sender), accountAddress(ctx, recipient), value)],
    apply: (state) => moveTokens(state, token, sender, recipient, value),
  };
}

/**
 * `disperseToken` through the disperse contract: one `Transfer` per recipient (the token emits them, so the log
 * address is the token), spending exactly `gasUsed` — the planner sizes it to steer the block towards its gas target.
 */
export function draftBatchTransfer(ctx: BlockContext, sender: number, gasUsed: bigint, gasLimit: bigint): TransactionDraft {
  const token = ctx.rng.int(DEVNET_CONTRACTS.tokens.length);
  const tokenAddress = DEVNET_CONTRACTS.tokens[token]!;
  const affordable = Number((gasUsed - TRANSFER_GAS) / BATCH_GAS_PER_RECIPIENT);
  const count = Math.max(1, Math.min(MAX_BATCH_RECIPIENTS, affordable));
  const share = ctx.state.tokenBalances[token]![sender]! / BigInt(4 * count);
  const recipients: number[] = [];
  const values: bigint[] = [];
  if (share >= 1n) {
    for (let i = 0; i < count; i++) {
      recipients.push(otherAccount(ctx, sender));
      values.push(ctx.rng.bigintBetween(1n, share));
    }
  }
  const recipientAddresses = recipients.map((index) => accountAddress(ctx, index));
  const input = encodeCall(DISPERSE_SELECTOR, [address(tokenAddress), addresses(recipientAddresses), uints(values)]);
  const fields = { nonce: ctx.state.nonces[sender]!, gas: gasLimit, to: DEVNET_CONTRACTS.disperse, value: 0n, input };
  const from = accountAddress(ctx, sender);
  return {
    senderIndex: sender,
    unsigned: unsignedCall(ctx, pickEnvelope(ctx), fields),
    gasUsed,
    status: 'success',
    logs: recipientAddresses.map((to, i) => transferLog(tokenAddress, from, to, values[i]!)),
    apply: (state) => recipients.forEach((to, i) => moveTokens(state, token, sender, to, values[i]!)),
  };
}
