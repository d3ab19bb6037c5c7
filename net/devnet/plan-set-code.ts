/**
 * EIP-7702 set-code transactions: a devnet account relays one or two authorizations signed by authorities (who
 * never send, so only authorizations move their nonces) and calls the first authority through its new code.
 * Mostly delegations to the devnet delegate on this chain; some use chain id 0 (any chain) or revoke (address 0).
 */
import { signAuthorization, type SignedAuthorization } from '../eth/index.js';
import { bytes, encodeCall, functionSelector } from './abi.js';
import type { BlockContext, TransactionDraft } from './block-context.js';
import { DEVNET_CONTRACTS } from './contracts.js';
import { estimatedGasLimit, feeMarketFields } from './fees.js';
import { ZERO_ADDRESS } from './header-fields.js';

const EXECUTE_SELECTOR = functionSelector('execute(bytes)');
/** EIP-7702 PER_EMPTY_ACCOUNT_COST, charged per authorization. */
const AUTHORIZATION_GAS = 25_000n;

function pickAuthorities(ctx: BlockContext): number[] {
  const first = ctx.rng.int(ctx.authorities.length);
  if (ctx.rng.chance(0.5)) return [first];
  const second = (first + 1 + ctx.rng.int(ctx.authorities.length - 1)) % ctx.authorities.length;
  return [first, second];
}

export function draftSetCode(ctx: BlockContext, sender: number): TransactionDraft {
  const chosen = pickAuthorities(ctx);
  const authorizationList: SignedAuthorization[] = chosen.map((index) => {
    const chainId = ctx.rng.chance(0.1) ? 0n : ctx.chainId;
    const delegate = ctx.rng.chance(0.1) ? ZERO_ADDRESS : DEVNET_CONTRACTS.delegate;
    return signAuthorization({ chainId, address: delegate, nonce: ctx.state.authorityNonces[index]! }, ctx.authorities[index]!.privateKey);
  });
  const gasUsed = 21_000n + AUTHORIZATION_GAS * BigInt(chosen.length) + BigInt(ctx.rng.between(5_000, 40_000));
  const input = encodeCall(EXECUTE_SELECTOR, [bytes(ctx.rng.bytes(ctx.rng.between(4, 64)))]);
  return {
    senderIndex: sender,
    unsigned: {
      type: 'eip7702',
      chainId: ctx.chainId,
      nonce: ctx.state.nonces[sender]!,
      ...feeMarketFields(ctx),
      gas: estimatedGasLimit(ctx, gasUsed),
      to: ctx.authorities[chosen[0]!]!.address,
      value: 0n,
      input,
      accessList: [],
      authorizationList,
    },
    gasUsed,
    status: 'success',
    logs: [],
    apply: (state) => {
      for (const index of chosen) state.authorityNonces[index]! += 1n;
    },
  };
}
