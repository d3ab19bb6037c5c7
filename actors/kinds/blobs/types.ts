/**
 * The blob processor's output records (spec §2.6). Properties are declared in the spec tables' order, which is also
 * the order of the rendered JSON. Every wei or gas quantity is a lossless decimal string (`bigint.toString()`).
 */
import type { Address, Hash, Hex } from '../sdk/chain.js';

export const FINALITIES = ['preview', 'included', 'finalized'] as const;
export type Finality = (typeof FINALITIES)[number];

export const BLOB_SCHEDULE_SOURCES = ['chain_spec', 'eth_config', 'configured'] as const;
export type BlobScheduleSource = (typeof BLOB_SCHEDULE_SOURCES)[number];

/** A decimal integer string without sign or leading zeros, e.g. `"131072"`. */
export type DecimalString = string;

export interface BlobsBlock {
  network: string;
  blockNumber: number;
  blockHash: Hash;
  parentHash: Hash;
  timestamp: number;
  size: DecimalString | null;
  blobCount: number;
  blobGasUsed: DecimalString;
  excessBlobGas: DecimalString;
  blobBaseFee: DecimalString;
  blobEthBurnedWei: DecimalString;
  executionBaseFee: DecimalString | null;
  gasUsed: DecimalString | null;
  gasLimit: DecimalString | null;
  executionEthBurnedWei: DecimalString | null;
  reserveFeeWei: DecimalString | null;
  transactionCount: number;
  targetBlobsPerBlock: number;
  maxBlobsPerBlock: number;
  transformVersion: number;
  finality: Finality;
}

export interface BlobTransaction {
  network: string;
  blockNumber: number;
  blockHash: Hash;
  txHash: Hash;
  senderAddress: Address;
  blobVersionedHashes: Hash[];
  blobCount: number;
  totalBurnedWei: DecimalString;
  executionBurnedWei: DecimalString;
  blobBurnedWei: DecimalString;
}

export interface BlobSchedule {
  name: string;
  /** The first block at or after `activationTimestamp`; null while that block is not known (see `scheduleRows`). */
  activationBlock: number | null;
  activationTimestamp: number;
  /** EIP-2124 fork id hash (4 bytes) in force from this activation on. */
  forkId: Hex;
  targetBlobsPerBlock: number;
  maxBlobsPerBlock: number;
  baseFeeUpdateFraction: DecimalString;
  eip7918: boolean;
  source: BlobScheduleSource;
}

/** Payload of `blobs.block.put` (and of `blobs.block.delete`, naming what to remove). */
export interface BlobsBlockChange {
  block: BlobsBlock;
  transactions: BlobTransaction[];
}
