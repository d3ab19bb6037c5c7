/** Pool tasks of the ingest bench (runtime/pool.ts): the CPU part of ingest for a run of consecutive blocks. */
import type { ChainRecord } from './chain-file.js';
import { processBlock, type IngestContext, type ProcessedBlock } from './process-block.js';
import { emptyStageTotals, type StageTotals } from './stage-clock.js';

export interface ProcessBlocksInput {
  context: IngestContext;
  records: ChainRecord[];
}

export interface ProcessBlocksOutput {
  blocks: ProcessedBlock[];
  totals: StageTotals;
}

export async function processBlocks(input: ProcessBlocksInput): Promise<ProcessBlocksOutput> {
  const totals = emptyStageTotals();
  const blocks: ProcessedBlock[] = [];
  for (const record of input.records) blocks.push(await processBlock(record, input.context, totals));
  return { blocks, totals };
}
