/**
 * Verified ingest split over a worker pool: runs of consecutive blocks are processed on the pool (a bounded number
 * in flight), and the main thread commits their results in chain order, each block alone or in batches.
 */
import type { TaskPool } from '../../runtime/pool.js';
import { readChainFile, type ChainRecord } from './chain-file.js';
import type { CachedChain } from './chain-cache.js';
import { openIngestStore } from './ingest-store.js';
import type { IngestContext, ProcessedBlock } from './process-block.js';
import { RunMeter, type IngestRun } from './run-meter.js';
import { addStageTotals, timedAsync } from './stage-clock.js';
import type { ProcessBlocksInput, ProcessBlocksOutput } from './tasks.js';

/** Blocks per pool task: small enough to keep both workers busy to the end, large enough to amortize a task. */
const BLOCKS_PER_TASK = 8;
/** Tasks in flight per worker thread: one running, one queued, so a worker never waits for the main thread. */
const TASKS_IN_FLIGHT_PER_THREAD = 2;

export async function runOnWorkers(chain: CachedChain, context: IngestContext, pool: TaskPool, commitEvery: number): Promise<IngestRun> {
  const store = openIngestStore(chain.config.chainId);
  const inFlight: Promise<ProcessBlocksOutput>[] = [];
  try {
    const meter = new RunMeter(Math.ceil(chain.blocks / 2));
    let pending: ProcessedBlock[] = [];
    const commit = async (blocks: ProcessedBlock[]) => {
      await timedAsync(meter.totals, 'commit', () => store.commit(blocks));
      meter.committed(blocks.length);
    };
    const settleOldest = async () => {
      const output = await inFlight.shift()!;
      addStageTotals(meter.totals, output.totals);
      for (const block of output.blocks) {
        pending.push(block);
        if (pending.length >= commitEvery) {
          await commit(pending);
          pending = [];
        }
      }
    };
    const submit = async (records: ChainRecord[]) => {
      inFlight.push(pool.run<ProcessBlocksOutput>('processBlocks', { context, records } satisfies ProcessBlocksInput));
      if (inFlight.length >= pool.threads * TASKS_IN_FLIGHT_PER_THREAD) await settleOldest();
    };
    let records: ChainRecord[] = [];
    for await (const record of readChainFile(chain.path)) {
      records.push(record);
      if (records.length === BLOCKS_PER_TASK) {
        await submit(records);
        records = [];
      }
    }
    if (records.length > 0) await submit(records);
    while (inFlight.length > 0) await settleOldest();
    if (pending.length > 0) await commit(pending);
    return meter.finish();
  } finally {
    await Promise.allSettled(inFlight);
    await store.close();
  }
}
