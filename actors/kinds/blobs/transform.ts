/**
 * The pure blob-fee transform (`kind = "blobs"`, block-local): one verified block in, one BlobsBlock and its
 * BlobTransaction rows out. The field meanings are `BLOB_FIELD_DEFINITIONS`.
 *
 * Decisions: a block before Cancun throws `BlobsBlockBeforeCancunError` (the processor's start must be at or after
 * the Cancun activation block); a block without receipts throws `BlobsReceiptsRequiredError` (per-transaction
 * execution burn needs receipt gas used), even when it holds no blob transaction, so a source without receipts fails
 * at the first block rather than at the first blob; a block without transactions needs none.
 */
import {
  blobBaseFee,
  blobParamsAt,
  blobReservePrice,
  GAS_PER_BLOB,
  hashHeader,
  type BlobParams,
  type BlockHeader,
  type ForkSchedule,
  type Hash,
  type Receipt,
} from '../sdk/chain.js';
import { blobTransactionRows } from './blob-transaction-rows.js';
import { BlobsBlockBeforeCancunError, BlobsMaterialMismatchError, BlobsReceiptsRequiredError, type BlockIdentity } from './errors.js';
import { gasUsedPerTransaction } from './receipt-gas-used.js';
import type { BlobOnlyTransaction } from '../sdk/blob-transactions-only.js';
import type { BlobsBlock, BlobsBlockChange, Finality } from './types.js';

export { BLOB_FIELD_DEFINITIONS } from './field-definitions.js';

/** Written into every BlobsBlock; bump it when a field's computation changes (a new processor version). */
export const TRANSFORM_VERSION = 1;

export interface TransformBlockInput {
  network: string;
  schedule: ForkSchedule;
  header: BlockHeader;
  /** Full transactions, or only what the transform reads (`blobTransactionsOnly`). */
  transactions: readonly BlobOnlyTransaction[];
  /** Only each receipt's cumulativeGasUsed is read (full receipts fit). */
  receipts: readonly Pick<Receipt, 'cumulativeGasUsed'>[] | null;
  /** RLP size of the whole block (see `blockRlpSize`); null when unknown. */
  blockSizeBytes: number | null;
  finality: Finality;
  /** The block hash when the caller already holds it (from the chain journal); otherwise keccak256 of the header. */
  blockHash?: Hash;
}

export interface TransformedBlock extends BlobsBlockChange {
  /** Canonical index in the block of each row of `transactions` (for `blockTxIndexKey`). */
  transactionIndexes: number[];
}

/** The blob header fields, present from Cancun on. */
interface BlobHeaderFields {
  blobGasUsed: bigint;
  excessBlobGas: bigint;
  baseFeePerGas: bigint;
}

function firstBlobForkTimestamp(schedule: ForkSchedule): number | null {
  return schedule.forks.find((fork) => fork.blob !== undefined)?.timestamp ?? null;
}

function requireBlobParams(schedule: ForkSchedule, header: BlockHeader, block: BlockIdentity): BlobParams {
  const params = blobParamsAt(schedule, header);
  if (params === undefined) throw new BlobsBlockBeforeCancunError(block, firstBlobForkTimestamp(schedule));
  return params;
}

function requireBlobHeaderFields(header: BlockHeader, block: BlockIdentity): BlobHeaderFields {
  const { blobGasUsed, excessBlobGas, baseFeePerGas } = header;
  if (blobGasUsed === undefined || excessBlobGas === undefined || baseFeePerGas === undefined) {
    throw new BlobsMaterialMismatchError(block, 'the schedule says a blob fork is active but the header has no blobGasUsed, excessBlobGas or baseFeePerGas');
  }
  return { blobGasUsed, excessBlobGas, baseFeePerGas };
}

function requireReceipts(input: TransformBlockInput, block: BlockIdentity): readonly Pick<Receipt, 'cumulativeGasUsed'>[] {
  if (input.receipts === null) {
    if (input.transactions.length === 0) return [];
    throw new BlobsReceiptsRequiredError(block);
  }
  if (input.receipts.length !== input.transactions.length) {
    throw new BlobsMaterialMismatchError(block, `${input.receipts.length} receipts for ${input.transactions.length} transactions`);
  }
  return input.receipts;
}

function sizeField(blockSizeBytes: number | null, block: BlockIdentity): string | null {
  if (blockSizeBytes === null) return null;
  if (!Number.isSafeInteger(blockSizeBytes) || blockSizeBytes <= 0) {
    throw new RangeError(`blobs processor, block ${block.number} (${block.hash}): blockSizeBytes must be a positive integer or null, got ${blockSizeBytes}`);
  }
  return blockSizeBytes.toString();
}

export function transformBlock(input: TransformBlockInput): TransformedBlock {
  const { header } = input;
  const blockHash = input.blockHash ?? hashHeader(header);
  const identity: BlockIdentity = { number: header.number, hash: blockHash };
  const params = requireBlobParams(input.schedule, header, identity);
  const fields = requireBlobHeaderFields(header, identity);
  const gasUsed = gasUsedPerTransaction(requireReceipts(input, identity), identity);
  const receiptGasTotal = gasUsed.reduce((sum, used) => sum + used, 0n);
  if (receiptGasTotal !== header.gasUsed) {
    throw new BlobsMaterialMismatchError(identity, `receipts use ${receiptGasTotal} gas but the header gasUsed is ${header.gasUsed}`);
  }

  const blobFee = blobBaseFee(fields.excessBlobGas, params.baseFeeUpdateFraction);
  const { rows, indexes } = blobTransactionRows({
    network: input.network,
    blockNumber: header.number,
    blockHash,
    transactions: input.transactions,
    gasUsed,
    executionBaseFee: fields.baseFeePerGas,
    blobBaseFee: blobFee,
  });
  const blobCount = rows.reduce((sum, row) => sum + row.blobCount, 0);
  if (BigInt(blobCount) * GAS_PER_BLOB !== fields.blobGasUsed) {
    throw new BlobsMaterialMismatchError(identity, `${blobCount} blobs use ${BigInt(blobCount) * GAS_PER_BLOB} blob gas but the header blobGasUsed is ${fields.blobGasUsed}`);
  }

  const block: BlobsBlock = {
    network: input.network,
    blockNumber: header.number,
    blockHash,
    parentHash: header.parentHash,
    timestamp: header.timestamp,
    size: sizeField(input.blockSizeBytes, identity),
    blobCount,
    blobGasUsed: fields.blobGasUsed.toString(),
    excessBlobGas: fields.excessBlobGas.toString(),
    blobBaseFee: blobFee.toString(),
    blobEthBurnedWei: (fields.blobGasUsed * blobFee).toString(),
    executionBaseFee: fields.baseFeePerGas.toString(),
    gasUsed: header.gasUsed.toString(),
    gasLimit: header.gasLimit.toString(),
    executionEthBurnedWei: (header.gasUsed * fields.baseFeePerGas).toString(),
    reserveFeeWei: params.eip7918 ? blobReservePrice(fields.baseFeePerGas).toString() : null,
    transactionCount: input.transactions.length,
    targetBlobsPerBlock: params.target,
    maxBlobsPerBlock: params.max,
    transformVersion: TRANSFORM_VERSION,
    finality: input.finality,
  };
  return { block, transactions: rows, transactionIndexes: indexes };
}
