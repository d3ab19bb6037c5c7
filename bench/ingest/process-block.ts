/**
 * The CPU part of verified ingest for one block from the chain file: decode, verify against the header (hash,
 * transactions/withdrawals/receipts roots, bloom, gas), the blob-fee transform and its rendered entity rows. Each
 * stage's time goes into `totals`. Pure, so it runs the same on the main thread and on pool workers.
 */
import { decodeBlockBody, decodeEth69Receipts, decodeHeader, hexToBytes, verifyBlock, type ForkSchedule, type Hash } from '../../net/eth/index.js';
import { blockEntries, transformBlock, type EntityEntry } from '../../actors/processors/blobs/index.js';
import type { BlockMaterial } from '../../store/chain-material.js';
import { splitBlockRlp } from './block-parts.js';
import type { ChainRecord } from './chain-file.js';
import { timed, timedAsync, type StageTotals } from './stage-clock.js';

export interface IngestContext {
  network: string;
  schedule: ForkSchedule;
}

export interface ProcessedBlock {
  parentHash: Hash;
  material: BlockMaterial;
  entries: EntityEntry[];
}

export async function processBlock(record: ChainRecord, context: IngestContext, totals: StageTotals): Promise<ProcessedBlock> {
  const { parts, header, body } = timed(totals, 'decode header+body', () => {
    const parts = splitBlockRlp(record.block);
    return { parts, header: decodeHeader(parts.header), body: decodeBlockBody(parts.body) };
  });
  const receipts = timed(totals, 'decode receipts (+bloom)', () => decodeEth69Receipts(record.receipts));
  const { hash } = await timedAsync(totals, 'verify (hash, roots, bloom)', () => verifyBlock({ header, ...body, receipts }));
  const transformed = timed(totals, 'blob transform (+blob senders)', () =>
    transformBlock({
      network: context.network, schedule: context.schedule, header, transactions: body.transactions, receipts,
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
