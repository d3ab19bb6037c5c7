/**
 * What each blob processor field means and how it is computed, in words, for the schema route
 * (`GET /v1/processors/{p}/schema`). Keys follow the spec tables' order. `transform.ts` computes exactly this.
 */
import type { BlobSchedule, BlobsBlock, BlobsBlockChange, BlobTransaction } from './types.js';

export interface BlobFieldDefinitions {
  BlobsBlock: Readonly<Record<keyof BlobsBlock, string>>;
  BlobTransaction: Readonly<Record<keyof BlobTransaction, string>>;
  BlobSchedule: Readonly<Record<keyof BlobSchedule, string>>;
  BlobsBlockChange: Readonly<Record<keyof BlobsBlockChange, string>>;
}

export const BLOB_FIELD_DEFINITIONS: Readonly<BlobFieldDefinitions> = Object.freeze({
  BlobsBlock: Object.freeze({
    network: 'Network name the processor instance is configured for.',
    blockNumber: 'Block number.',
    blockHash: 'keccak256 of the RLP-encoded header.',
    parentHash: 'Header parentHash.',
    timestamp: 'Header timestamp, seconds since the Unix epoch.',
    size: 'Size in bytes of the RLP-encoded block [header, transactions, uncles, withdrawals], as a decimal string; null when the block bytes were not available.',
    blobCount: 'Number of blobs in the block: the sum of blobVersionedHashes over its type-3 transactions.',
    blobGasUsed: 'Header blobGasUsed (always blobCount × 131072).',
    excessBlobGas: 'Header excessBlobGas.',
    blobBaseFee: "Blob base fee per blob gas in wei: fakeExponential(1, excessBlobGas, baseFeeUpdateFraction) from this block's own excessBlobGas under the update fraction of the fork active at this block (EIP-4844, EIP-7691, EIP-7892).",
    blobEthBurnedWei: 'Wei burned for blob gas: blobGasUsed × blobBaseFee.',
    executionBaseFee: 'Header baseFeePerGas in wei (EIP-1559).',
    gasUsed: 'Header gasUsed.',
    gasLimit: 'Header gasLimit.',
    executionEthBurnedWei: 'Wei burned for execution gas: gasUsed × executionBaseFee.',
    reserveFeeWei: 'EIP-7918 reserve price of one blob in wei: BLOB_BASE_COST (8192) × executionBaseFee; null where EIP-7918 (Osaka) is not active at this block.',
    transactionCount: 'Number of transactions of every type in the block.',
    targetBlobsPerBlock: 'Target blobs per block of the fork active at this block.',
    maxBlobsPerBlock: 'Maximum blobs per block of the fork active at this block.',
    transformVersion: 'Version of the transform that produced this record (1).',
    finality: 'Finality of the block when this record was written: preview, included or finalized.',
  }),
  BlobTransaction: Object.freeze({
    network: 'Network name the processor instance is configured for.',
    blockNumber: 'Number of the block holding the transaction.',
    blockHash: 'Hash of the block holding the transaction.',
    txHash: 'keccak256 of the canonical transaction encoding (0x03 ‖ rlp(fields)).',
    senderAddress: 'Sender recovered from the transaction signature.',
    blobVersionedHashes: 'The transaction blobVersionedHashes, in transaction order.',
    blobCount: 'Number of blobVersionedHashes.',
    totalBurnedWei: 'executionBurnedWei + blobBurnedWei.',
    executionBurnedWei: "Receipt gas used × the block's executionBaseFee, where receipt gas used is the difference of cumulativeGasUsed from the previous receipt in the block.",
    blobBurnedWei: "blobCount × 131072 × the block's blobBaseFee.",
  }),
  BlobSchedule: Object.freeze({
    name: 'Fork name (cancun, prague, osaka, bpo1, ...).',
    activationBlock: 'First block at or after activationTimestamp; null while that block is not known to the node (a future fork, or a past one not yet resolved).',
    activationTimestamp: 'Timestamp from which the fork is active.',
    forkId: 'EIP-2124 fork id hash in force from this activation on.',
    targetBlobsPerBlock: 'Target blobs per block from this activation on.',
    maxBlobsPerBlock: 'Maximum blobs per block from this activation on.',
    baseFeeUpdateFraction: 'Blob base fee update fraction from this activation on, as a decimal string.',
    eip7918: 'Whether the EIP-7918 blob reserve price applies (Osaka and every later fork).',
    source: 'Where the schedule came from: chain_spec (genesis / chain spec), eth_config (an upstream eth_config answer) or configured (operator configuration).',
  }),
  BlobsBlockChange: Object.freeze({
    block: 'The BlobsBlock.',
    transactions: 'Its BlobTransaction rows (type-3 transactions only), in canonical transaction index order.',
  }),
});
