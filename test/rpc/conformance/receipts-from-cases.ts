/**
 * Receipts for `chain-node import --receipts` built from the recorded conformance responses: every receipt the
 * `eth_getBlockReceipts` and `eth_getTransactionReceipt` cases hold, grouped by block, kept only for blocks where
 * they cover every transaction (indexes 0 … n-1 of a block with n transactions). The import then verifies each
 * kept block against its header's receiptsRoot, so nothing here is trusted.
 */
import type { IoCase } from './io-cases.js';

export interface CaseReceipts {
  /** Block hash → its receipts in transaction order (an `eth_getBlockReceipts` result). */
  readonly complete: Record<string, unknown[]>;
  /** Block hash → how many of its transactions have a recorded receipt, for blocks left out. */
  readonly partial: Record<string, { readonly have: number; readonly transactions: number }>;
}

type ReceiptJson = { blockHash?: unknown; transactionIndex?: unknown };

/** `transactionCounts`: block hash → number of transactions, from the chain file. */
export function receiptsFromCases(cases: readonly IoCase[], transactionCounts: ReadonlyMap<string, number>): CaseReceipts {
  const byBlock = new Map<string, Map<number, unknown>>();
  const add = (receipt: unknown) => {
    if (typeof receipt !== 'object' || receipt === null) return;
    const { blockHash, transactionIndex } = receipt as ReceiptJson;
    if (typeof blockHash !== 'string' || typeof transactionIndex !== 'string') return;
    const block = byBlock.get(blockHash) ?? new Map<number, unknown>();
    block.set(Number(BigInt(transactionIndex)), receipt);
    byBlock.set(blockHash, block);
  };
  for (const ioCase of cases) {
    for (const { request, response } of ioCase.exchanges) {
      if (request.method === 'eth_getBlockReceipts' && Array.isArray(response.result)) response.result.forEach(add);
      if (request.method === 'eth_getTransactionReceipt') add(response.result);
    }
  }
  const complete: Record<string, unknown[]> = {};
  const partial: Record<string, { have: number; transactions: number }> = {};
  for (const [hash, receipts] of byBlock) {
    const transactions = transactionCounts.get(hash);
    if (transactions === undefined) continue;
    const ordered = Array.from({ length: transactions }, (_, index) => receipts.get(index));
    if (ordered.every((receipt) => receipt !== undefined)) complete[hash] = ordered;
    else partial[hash] = { have: receipts.size, transactions };
  }
  return { complete, partial };
}
