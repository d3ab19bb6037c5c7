/**
 * The CPU part of verified ingest for one block from the chain file: verification of the raw material against the
 * header (hash, transactions/withdrawals/receipts roots, bloom, gas; `verifyBlockMaterialBytes`, which also yields
 * the decoded header and each receipt's cumulative gas), the decode of the only transactions the blob-fee transform reads (type 3),
 * the transform (which recovers the senders of blob transactions) and its rendered entity rows. Each stage's time
 * goes into `totals`. Pure, so it runs the same on the main thread and on pool workers.
 */
import { hexToBytes, type ForkSchedule, type Hash } from '../../net/eth/index.js';
import { verifyBlockMaterialBytes } from '../../net/eth/verify-material.js';
import { blockEntries, transformBlock, type EntityEntry } from '../../actors/kinds/blobs/index.js';
import { blobTransactionsOnly } from '../../actors/kinds/sdk/blob-transactions-only.js';
import type { BlockMaterial } from '../../store/chain-material.js';
import { splitBlockRlp } from '../../net/eth/block-parts.js';
import type { ChainRecord } from './chain-file.js';
import { timed, type StageTotals } from './stage-clock.js';

export interface IngestContext {
  network: string;
  schedule: ForkSchedule;
}

export interface ProcessedBlock {
  parentHash: Hash;
  material: BlockMaterial;
  entries: EntityEntry[];
}

export function processBlock(record: ChainRecord, context: IngestContext, totals: StageTotals): ProcessedBlock {
  const parts = timed(totals, 'split block', () => splitBlockRlp(record.block));
  const verified = timed(totals, 'verify (hash, roots, bloom)', () =>
    verifyBlockMaterialBytes({ header: parts.header, body: parts.body, receipts: record.receipts }));
  const { hash, header } = verified;
  const receipts = verified.cumulativeGasUsed!.map((cumulativeGasUsed) => ({ cumulativeGasUsed }));
  const transactions = timed(totals, 'decode blob transactions', () => blobTransactionsOnly(verified.transactions));
  const transformed = timed(totals, 'blob transform (+blob senders)', () =>
    transformBlock({
      network: context.network, schedule: context.schedule, header, transactions, receipts,
      blockSizeBytes: record.block.length, finality: 'included', blockHash: hash,
    }),
  );
  const entries = timed(totals, 'render rows', () => blockEntries(transformed));
  return {
    parentHash: header.parentHash,
    material: { number: header.number, hash: hexToBytes(hash), header: parts.header, body: parts.body, receipts: record.receipts },
    entries,
  };
}
