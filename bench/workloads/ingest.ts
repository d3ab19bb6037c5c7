/**
 * Workload `ingest`: verified ingest of a pre-generated, mainnet-shaped devnet chain (cached under `bench/cache/`)
 * with the blob-fee processor on — decode, verification against the header, blob transform, rendered rows and an
 * LMDB commit per block or per batch of 64 — on the main thread alone and split over `runtime.pool_threads` pool workers. Reports
 * blocks/s, where the time goes per stage (ms/block), RSS and its anonymous part at the start, middle and end of each
 * pass (blocks stream from the file, so process memory must not grow with the range; the file-backed rest is the LMDB
 * map of the store being filled), and sender recovery for all and for blob transactions only.
 */
import { fileURLToPath } from 'node:url';
import { devnetForkSchedule } from '../../net/devnet/index.js';
import { createTaskPool } from '../../runtime/pool.js';
import { cachedChain, type CachedChain } from '../ingest/chain-cache.js';
import { MAINNET_SHAPED_CHAIN, SMOKE_CHAIN } from '../ingest/chains.js';
import type { IngestContext } from '../ingest/process-block.js';
import type { IngestRun } from '../ingest/run-meter.js';
import { runSingleThreaded } from '../ingest/run-single.js';
import { runOnWorkers } from '../ingest/run-workers.js';
import { senderCosts, type SenderCosts } from '../ingest/sender-costs.js';
import { INGEST_STAGES } from '../ingest/stage-clock.js';
import { warmUpMainThread, warmUpPool } from '../ingest/warm-up.js';
import { summarize } from '../stats.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

interface Configuration {
  label: string;
  /** 0: everything on the main thread; otherwise pool workers process and the main thread commits. */
  threads: number;
  commitEvery: number;
}

/**
 * The pool's size is the node's `runtime.pool_threads` (2 by default; the `pool threads` figure), so
 * `--series runtime.pool_threads=1,2,4` scales it; the labels stay the same across a series so its curves line up.
 */
function configurations(poolThreads: number): Configuration[] {
  return [
    { label: '1 thread, commit/block', threads: 0, commitEvery: 1 },
    { label: '1 thread, commit/64', threads: 0, commitEvery: 64 },
    { label: 'pool, commit/block', threads: poolThreads, commitEvery: 1 },
    { label: 'pool, commit/64', threads: poolThreads, commitEvery: 64 },
  ];
}

const MEMORY_POINTS = ['start', 'middle', 'end'] as const;

const TASKS_MODULE = fileURLToPath(new URL('../ingest/tasks.js', import.meta.url));

function figure(name: string, unit: string, values: readonly number[]): Figure {
  return { name, unit, ...summarize(values) };
}

async function runConfiguration(configuration: Configuration, chain: CachedChain, context: IngestContext, rounds: number): Promise<IngestRun[]> {
  const runs: IngestRun[] = [];
  if (configuration.threads === 0) {
    for (let round = 0; round < rounds; round++) runs.push(await runSingleThreaded(chain, context, configuration.commitEvery));
    return runs;
  }
  const pool = createTaskPool({ module: TASKS_MODULE, threads: configuration.threads });
  try {
    await warmUpPool(chain.path, context, pool);
    for (let round = 0; round < rounds; round++) runs.push(await runOnWorkers(chain, context, pool, configuration.commitEvery));
    return runs;
  } finally {
    await pool.destroy();
  }
}

function configurationFigures(configuration: Configuration, runs: readonly IngestRun[]): Figure[] {
  const { label } = configuration;
  const perBlock = (pick: (run: IngestRun) => number) => runs.map((run) => pick(run) / run.blocks);
  const stageUnit = configuration.threads === 0 ? 'ms/block' : 'worker ms/block';
  return [
    figure(`${label}: verified ingest`, 'blocks/s', runs.map((run) => run.blocks / run.seconds)),
    figure(`${label}: wall time`, 'ms/block', perBlock((run) => run.seconds * 1000)),
    // Load-independent: what a block costs the whole process (every thread), so a run on a shared machine still says
    // what the two cores could do alone (2,000 / this = a CPU-bound ceiling in blocks/s).
    figure(`${label}: CPU, all threads`, 'ms/block', perBlock((run) => run.cpuSeconds * 1000)),
    ...INGEST_STAGES.map((stage) => figure(`${label}: ${stage}`, stage === 'commit' ? 'ms/block' : stageUnit, perBlock((run) => run.totals[stage]))),
    ...MEMORY_POINTS.map((point) => figure(`${label}: RSS ${point}`, 'MiB', runs.map((run) => run.memory[point].rssMiB))),
    ...MEMORY_POINTS.map((point) => figure(`${label}: RSS anonymous ${point}`, 'MiB', runs.map((run) => run.memory[point].anonymousMiB))),
  ];
}

function senderFigures(costs: readonly SenderCosts[]): Figure[] {
  return [
    figure('sender recovery, all txs', 'ms/block', costs.map((c) => c.allMsPerBlock)),
    figure('sender recovery, blob txs only', 'ms/block', costs.map((c) => c.blobOnlyMsPerBlock)),
    figure('sender recovery, one tx', 'µs', costs.map((c) => c.microsecondsPerTransaction)),
    figure('chain: transactions', 'per block', costs.map((c) => c.transactionsPerBlock)),
    figure('chain: blob transactions', 'per block', costs.map((c) => c.blobTransactionsPerBlock)),
  ];
}

function reportGeneration(blocks: number): (done: number) => void {
  return (done) => {
    if (done % 64 === 0 || done === blocks) process.stderr.write(`ingest: generating the chain, block ${done}/${blocks}\n`);
  };
}

export const ingestWorkload: Workload = {
  name: 'ingest',
  description: 'verified ingest of a mainnet-shaped devnet chain with the blob processor: blocks/s, ms/block per stage, RSS',
  async run(options: WorkloadOptions) {
    const definition = options.smoke ? SMOKE_CHAIN : MAINNET_SHAPED_CHAIN;
    const chain = await cachedChain(definition, reportGeneration(definition.blocks));
    const context: IngestContext = { network: 'devnet', schedule: devnetForkSchedule(chain.config) };
    await warmUpMainThread(chain.path, context);
    const figures: Figure[] = [];
    const poolThreads = options.config?.runtime.pool_threads ?? 2;
    figures.push(figure('pool threads (runtime.pool_threads)', 'threads', [poolThreads]));
    for (const configuration of configurations(poolThreads)) figures.push(...configurationFigures(configuration, await runConfiguration(configuration, chain, context, options.rounds)));
    const sampleBlocks = options.smoke ? 4 : 16;
    const costs: SenderCosts[] = [];
    for (let round = 0; round < options.rounds; round++) costs.push(await senderCosts(chain, Math.min(64, Math.floor(chain.blocks / 2)), sampleBlocks));
    return [...figures, ...senderFigures(costs)];
  },
};
