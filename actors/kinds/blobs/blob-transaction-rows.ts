/** BlobTransaction rows: one per type-3 transaction, in canonical transaction index order. */
import { GAS_PER_BLOB, hashTransaction, hashTransactionEncoding, recoverAddress, recoverTransactionSender, typedSigningHash, type Address, type Eip4844Transaction, type Hash } from '../sdk/chain.js';
import type { BlobOnlyTransaction, EncodedBlobTransaction } from '../sdk/blob-transactions-only.js';
import type { BlobTransaction } from './types.js';

export interface BlobTransactionRowsInput {
  network: string;
  blockNumber: number;
  blockHash: Hash;
  transactions: readonly BlobOnlyTransaction[];
  /** Gas used by each transaction, index for index with `transactions`. */
  gasUsed: readonly bigint[];
  executionBaseFee: bigint;
  blobBaseFee: bigint;
}

export interface BlobTransactionRows {
  rows: BlobTransaction[];
  /** The canonical index in the block of each row. */
  indexes: number[];
}

/** The sender; from the kept canonical encoding when the transaction was decoded from one (no re-encoding). */
function senderOf(tx: Eip4844Transaction | EncodedBlobTransaction): Address {
  return 'encoding' in tx ? recoverAddress(typedSigningHash(tx.encoding), tx) : recoverTransactionSender(tx);
}

export function blobTransactionRows(input: BlobTransactionRowsInput): BlobTransactionRows {
  const rows: BlobTransaction[] = [];
  const indexes: number[] = [];
  for (const [index, tx] of input.transactions.entries()) {
    if (tx.type !== 'eip4844') continue;
    const executionBurned = input.gasUsed[index]! * input.executionBaseFee;
    const blobBurned = BigInt(tx.blobVersionedHashes.length) * GAS_PER_BLOB * input.blobBaseFee;
    rows.push({
      network: input.network,
      blockNumber: input.blockNumber,
      blockHash: input.blockHash,
      txHash: 'encoding' in tx ? hashTransactionEncoding(tx.encoding) : hashTransaction(tx),
      senderAddress: senderOf(tx),
      blobVersionedHashes: [...tx.blobVersionedHashes],
      blobCount: tx.blobVersionedHashes.length,
      totalBurnedWei: (executionBurned + blobBurned).toString(),
      executionBurnedWei: executionBurned.toString(),
      blobBurnedWei: blobBurned.toString(),
    });
    indexes.push(index);
  }
  return { rows, indexes };
}
