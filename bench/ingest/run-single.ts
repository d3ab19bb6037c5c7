/** Verified ingest on the main thread alone: each block is processed, then committed alone or with its batch. */
import { readChainFile } from './chain-file.js';
import type { CachedChain } from './chain-cache.js';
import { openIngestStore } from './ingest-store.js';
import { processBlock, type IngestContext, type ProcessedBlock } from './process-block.js';
import { RunMeter, type IngestRun } from './run-meter.js';
import { timedAsync } from './stage-clock.js';

export async function runSingleThreaded(chain: CachedChain, context: IngestContext, commitEvery: number): Promise<IngestRun> {
  const store = openIngestStore(chain.config.chainId);
  try {
    const meter = new RunMeter(Math.ceil(chain.blocks / 2));
    let pending: ProcessedBlock[] = [];
    const commit = async () => {
      await timedAsync(meter.totals, 'commit', () => store.commit(pending));
      meter.committed(pending.length);
      pending = [];
    };
    for await (const record of readChainFile(chain.path)) {
      pending.push(await processBlock(record, context, meter.totals));
      if (pending.length >= commitEvery) await commit();
    }
    if (pending.length > 0) await commit();
    return meter.finish();
  } finally {
    await store.close();
  }
}
