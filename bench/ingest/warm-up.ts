/** A short unmeasured pass before the measured rounds, so they start with modules loaded and hot code compiled. */
import type { TaskPool } from '../../runtime/pool.js';
import { readChainFile, type ChainRecord } from './chain-file.js';
import { processBlock, type IngestContext } from './process-block.js';
import { emptyStageTotals } from './stage-clock.js';
import type { ProcessBlocksInput } from './tasks.js';

const WARM_UP_BLOCKS = 16;

async function firstRecords(path: string, count: number): Promise<ChainRecord[]> {
  const records: ChainRecord[] = [];
  for await (const record of readChainFile(path)) {
    records.push(record);
    if (records.length === count) break;
  }
  return records;
}

export async function warmUpMainThread(path: string, context: IngestContext): Promise<void> {
  for (const record of await firstRecords(path, WARM_UP_BLOCKS)) await processBlock(record, context, emptyStageTotals());
}

export async function warmUpPool(path: string, context: IngestContext, pool: TaskPool): Promise<void> {
  const records = await firstRecords(path, WARM_UP_BLOCKS);
  await Promise.all(Array.from({ length: pool.threads }, () => pool.run('processBlocks', { context, records } satisfies ProcessBlocksInput)));
}
