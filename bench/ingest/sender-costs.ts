/**
 * Sender recovery (secp256k1 public-key recovery per transaction) measured apart from the ingest pass: for every
 * transaction, which a full-transaction index needs, and for blob transactions only, which is all the blob-fee
 * processor needs (its transform already does it, so the ingest pass includes this part).
 */
import { decodeBlock, recoverTransactionSender, type Transaction } from '../../net/eth/index.js';
import { readChainFile } from './chain-file.js';
import type { CachedChain } from './chain-cache.js';

export interface SenderCosts {
  /** Mean milliseconds per block, every transaction. */
  allMsPerBlock: number;
  /** Mean milliseconds per block, blob transactions only. */
  blobOnlyMsPerBlock: number;
  /** Mean microseconds per recovered transaction. */
  microsecondsPerTransaction: number;
  transactionsPerBlock: number;
  blobTransactionsPerBlock: number;
}

function recoverAll(transactions: readonly Transaction[]): number {
  const started = performance.now();
  for (const tx of transactions) recoverTransactionSender(tx);
  return performance.now() - started;
}

/** Measures `sampleBlocks` blocks taken after the first `skipBlocks` (past block 1's setup and the fork transitions). */
export async function senderCosts(chain: CachedChain, skipBlocks: number, sampleBlocks: number): Promise<SenderCosts> {
  let index = 0;
  let blocks = 0;
  let transactions = 0;
  let blobTransactions = 0;
  let allMs = 0;
  let blobMs = 0;
  for await (const record of readChainFile(chain.path)) {
    if (index++ < skipBlocks) continue;
    if (blocks === sampleBlocks) break;
    const block = decodeBlock(record.block);
    const blobs = block.transactions.filter((tx) => tx.type === 'eip4844');
    allMs += recoverAll(block.transactions);
    blobMs += recoverAll(blobs);
    transactions += block.transactions.length;
    blobTransactions += blobs.length;
    blocks += 1;
  }
  if (blocks === 0) throw new Error(`the chain has no blocks after the first ${skipBlocks} to sample`);
  return {
    allMsPerBlock: allMs / blocks,
    blobOnlyMsPerBlock: blobMs / blocks,
    microsecondsPerTransaction: (allMs * 1000) / transactions,
    transactionsPerBlock: transactions / blocks,
    blobTransactionsPerBlock: blobTransactions / blocks,
  };
}
