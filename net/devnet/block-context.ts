/** Everything a transaction planner may read while one block is planned, and the draft each planner returns. */
import type { Address, Log, ReceiptStatus, UnsignedTransaction } from '../eth/index.js';
import type { DevnetAccount } from './accounts.js';
import type { ChainState } from './chain-state.js';
import type { Prng } from './prng.js';

export interface BlockContext {
  chainId: bigint;
  number: number;
  timestamp: number;
  baseFee: bigint;
  /** The block's blob base fee; undefined before Cancun (no blob transactions then). */
  blobBaseFee: bigint | undefined;
  /** Whether EIP-7702 set-code transactions are valid (Prague on). */
  setCodeActive: boolean;
  accounts: readonly DevnetAccount[];
  authorities: readonly DevnetAccount[];
  rng: Prng;
  /** The state as of the previous planned transaction; planners read it, drafts' `apply` change it. */
  state: ChainState;
}

/** A transaction before signing, with its receipt's content and the state change it makes once included. */
export interface TransactionDraft {
  senderIndex: number;
  unsigned: UnsignedTransaction;
  gasUsed: bigint;
  status: ReceiptStatus;
  logs: Log[];
  /** Token, reserve and authority-nonce changes (the sender's nonce is advanced by the block planner). */
  apply(state: ChainState): void;
}

export const NO_STATE_CHANGE = (): void => {};

/** Another account than `exclude`, uniformly. */
export function otherAccount(ctx: BlockContext, exclude: number): number {
  const pick = ctx.rng.int(ctx.accounts.length - 1);
  return pick >= exclude ? pick + 1 : pick;
}

export function accountAddress(ctx: BlockContext, index: number): Address {
  return ctx.accounts[index]!.address;
}
