/**
 * Pre-rendered bytes for serving straight from LMDB: each record as UTF-8 JSON with its properties in the spec
 * tables' order, built field by field so the order never depends on how the caller assembled the object.
 */
import type { BlobSchedule, BlobsBlock, BlobsBlockChange, BlobTransaction } from './types.js';

export {
  blockKey,
  blockNumberOfKey,
  blockTxIndexKey,
  blockTxIndexPrefix,
  scheduleKey,
  txKey,
} from './keys.js';
export { withFinality } from './with-finality.js';

export function orderedBlock(b: BlobsBlock): BlobsBlock {
  return {
    network: b.network,
    blockNumber: b.blockNumber,
    blockHash: b.blockHash,
    parentHash: b.parentHash,
    timestamp: b.timestamp,
    size: b.size,
    blobCount: b.blobCount,
    blobGasUsed: b.blobGasUsed,
    excessBlobGas: b.excessBlobGas,
    blobBaseFee: b.blobBaseFee,
    blobEthBurnedWei: b.blobEthBurnedWei,
    executionBaseFee: b.executionBaseFee,
    gasUsed: b.gasUsed,
    gasLimit: b.gasLimit,
    executionEthBurnedWei: b.executionEthBurnedWei,
    reserveFeeWei: b.reserveFeeWei,
    transactionCount: b.transactionCount,
    targetBlobsPerBlock: b.targetBlobsPerBlock,
    maxBlobsPerBlock: b.maxBlobsPerBlock,
    transformVersion: b.transformVersion,
    finality: b.finality,
  };
}

export function orderedTransaction(t: BlobTransaction): BlobTransaction {
  return {
    network: t.network,
    blockNumber: t.blockNumber,
    blockHash: t.blockHash,
    txHash: t.txHash,
    senderAddress: t.senderAddress,
    blobVersionedHashes: [...t.blobVersionedHashes],
    blobCount: t.blobCount,
    totalBurnedWei: t.totalBurnedWei,
    executionBurnedWei: t.executionBurnedWei,
    blobBurnedWei: t.blobBurnedWei,
  };
}

export function orderedScheduleRow(s: BlobSchedule): BlobSchedule {
  return {
    name: s.name,
    activationBlock: s.activationBlock,
    activationTimestamp: s.activationTimestamp,
    forkId: s.forkId,
    targetBlobsPerBlock: s.targetBlobsPerBlock,
    maxBlobsPerBlock: s.maxBlobsPerBlock,
    baseFeeUpdateFraction: s.baseFeeUpdateFraction,
    eip7918: s.eip7918,
    source: s.source,
  };
}

function utf8Json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

export function renderBlock(block: BlobsBlock): Buffer {
  return utf8Json(orderedBlock(block));
}

export function renderTransaction(transaction: BlobTransaction): Buffer {
  return utf8Json(orderedTransaction(transaction));
}

export function renderScheduleRow(row: BlobSchedule): Buffer {
  return utf8Json(orderedScheduleRow(row));
}

/** The `data` of a `blobs.block.put` (or `blobs.block.delete`) envelope: exactly {block, transactions}. */
export function renderChangePayload(change: BlobsBlockChange): string {
  return JSON.stringify({ block: orderedBlock(change.block), transactions: change.transactions.map(orderedTransaction) });
}
