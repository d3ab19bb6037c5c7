/**
 * The block a kind is given (processor SDK): a recorded block decoded as far as the kind's needs ask
 * (`BlockInput`, read by the lane's block-input.ts), or the few fields an artifact's deltas are applied with.
 */
import type { BlockHeader } from '../../../net/eth/header.js';
import type { Hex } from '../../../net/eth/hex.js';
import type { Receipt } from '../../../net/eth/receipt.js';
import type { Transaction } from '../../../net/eth/transaction-types.js';

export interface BlockInput {
  readonly number: number;
  readonly hash: Hex;
  readonly header: BlockHeader;
  readonly transactions: readonly Transaction[];
  readonly receipts: readonly Receipt[] | null;
  /** The block's RLP size in bytes. */
  readonly sizeBytes: number;
  /** The parent's timestamp, when its header is recorded (fork activations are found by it). */
  readonly parentTimestamp: number | null;
}

/** The block an artifact belongs to: what applying its deltas needs beside them. */
export interface ArtifactBlock {
  readonly number: number;
  readonly hash: Hex;
  readonly parentHash: Hex;
  readonly timestamp: number;
}
