/**
 * Workload `backfill`: cold backfills end to end (issue 14's Measure). An upstream node (the devnet, every fork at
 * genesis, no reorgs) makes a chain fast, then slows to a block a second so it serves rather than builds; each round a
 * fresh follower node starts on it — live `rpc` source, `rpc` finality, one `rpc` history source, both on the
 * upstream's JSON-RPC on loopback — with a blobs and an erc20 instance at `start_block = 0`. Both are cold-backfilled
 * from the history source (fetch in JSON-RPC batches, convert, verify every block, record, apply or reduce, commit)
 * while the follower's live lane runs. Reports: blocks/s of each instance's backfill job (its range over the time from
 * its start to its end), the whole backfill's wall time, the follower's CPU per backfilled block (all its threads,
 * so load-independent), its RSS at the end and its peak. Beside it in the same run (not in --smoke): Ponder 0.16
 * backfilling the same tokens' Transfer logs over the same range from the same upstream, blocks/s.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ponderMissing, PONDER_FINALITY_BLOCKS, startPonder } from '../load/ponder-process.js';
import { trackDirectory } from '../leftovers.js';
import { rpc, startBenchNode, type BenchNode } from '../node.js';
import { cpuSeconds } from '../load/process-cpu.js';
import { compared, figure } from '../figures.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

const TOKENS = ['0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506', '0xc9bbd8575d55bf87fce6040031aaa9b3b4b90eae', '0x0fcde9daaf8b24c5b8f5b7b990d2489038e205bd'];
const CHAIN_ID = 1337;

interface Shape {
  /** Blocks the upstream makes before the followers start. */
  readonly blocks: number;
  readonly transactions: number;
}

/** The devnet's default block shape (12 ordinary and about 3 blob transactions a block). */
const FULL: Shape = { blocks: 10_000, transactions: 12 };
const SMOKE: Shape = { blocks: 40, transactions: 12 };

/** The upstream: forks at genesis (a follower takes the schedule from its eth_config), no reorgs, finality 4 behind. */
function upstreamSets(shape: Shape, blockTimeMs: number): string[] {
  return [
    `devnet.block_time_ms=${blockTimeMs}`, `devnet.transactions_per_block=${shape.transactions}`, 'devnet.reorg_every=0', 'devnet.finality_lag=4',
    'devnet.prague_after_seconds=0', 'devnet.osaka_after_seconds=0', 'devnet.bpo1_after_seconds=0',
  ];
}

function followerToml(upstream: string): string {
  return [
    '[sources.live]', 'kind = "rpc"', `url = "${upstream}"`, 'poll_interval_ms = 200',
    '[finality]', 'kind = "rpc"', 'poll_interval_ms = 200',
    '[[sources.history]]', 'id = "upstream"', 'kind = "rpc"', `url = "${upstream}"`,
    '[[processors]]', 'id = "blobs"', 'kind = "blobs"', 'start_block = 0',
    '[[processors]]', 'id = "erc20"', 'kind = "erc20"', `tokens = [${TOKENS.map((t) => `"${t}"`).join(', ')}]`, 'start_block = 0', '',
  ].join('\n');
}

interface JobView {
  id: string; state: string; fromBlock: number; toBlock: number; startedAt: string | null; finishedAt: string | null;
  lastError: { message: string } | null;
}

async function coldJobs(node: BenchNode): Promise<JobView[]> {
  return ((await (await fetch(`${node.baseUrl}/admin/v1/materialization-jobs`)).json()) as { data: JobView[] }).data;
}

/** VmRSS and VmHWM (peak) of a process, MiB. */
function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

interface Round {
  readonly blobsBlocksPerSecond: number;
  readonly erc20BlocksPerSecond: number;
  readonly wallSeconds: number;
  readonly blocks: number;
  readonly cpuMsPerBlock: number;
  readonly rssMiB: number;
  readonly peakMiB: number;
}

/** One fresh follower: starts, backfills both instances, and reports. */
async function followerRound(upstream: BenchNode): Promise<Round> {
  const follower = await startBenchNode(['runtime.shutdown_timeout_seconds=3'], { toml: followerToml(upstream.rpcUrl), readyTimeoutMs: 60_000 });
  try {
    const cpuAtStart = cpuSeconds(follower.pid);
    const started = performance.now();
    let jobs: JobView[] = [];
    await follower.waitFor('both cold backfills ended', async () => {
      jobs = await coldJobs(follower);
      return jobs.length === 2 && jobs.every((job) => job.state === 'completed' || job.state === 'failed');
    }, 1_800_000);
    const failed = jobs.find((job) => job.state === 'failed');
    if (failed) throw new Error(`cold backfill ${failed.id} failed: ${failed.lastError?.message}`);
    const wallSeconds = (performance.now() - started) / 1000;
    const cpuUsed = cpuSeconds(follower.pid) - cpuAtStart;
    const rate = (id: string) => {
      const job = jobs.find((j) => j.id === id)!;
      return (job.toBlock - job.fromBlock + 1) / ((Date.parse(job.finishedAt!) - Date.parse(job.startedAt!)) / 1000);
    };
    const blocks = jobs[0]!.toBlock - jobs[0]!.fromBlock + 1;
    return {
      blobsBlocksPerSecond: rate('cb-blobs'), erc20BlocksPerSecond: rate('cb-erc20'), wallSeconds, blocks,
      cpuMsPerBlock: (cpuUsed * 1000) / blocks, ...memoryOf(follower.pid),
    };
  } finally {
    await follower.stop();
  }
}

/** Ponder over the Transfer logs of [0, endBlock] from the upstream: blocks/s of its backfill. */
async function ponderRound(upstream: BenchNode, endBlock: number): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), 'cdn-bench-ponder-'));
  const remove = trackDirectory(work);
  const ponder = await startPonder({ rpcUrl: upstream.rpcUrl, chainId: CHAIN_ID, tokens: TOKENS, endBlock, databaseDir: join(work, 'pglite'), headTimeoutMs: 120_000 });
  try {
    await ponder.ready(1_800_000);
    const seconds = await ponder.backfillSeconds();
    if (seconds === null) throw new Error(`Ponder's log has no backfill start and end:\n${ponder.output().slice(-3000)}`);
    return (endBlock + 1) / seconds;
  } finally {
    await ponder.stop();
    remove();
  }
}

export const backfillWorkload: Workload = {
  name: 'backfill',
  description: 'cold backfills of a blobs and an erc20 instance (start_block = 0) on a fresh follower from an upstream node\'s JSON-RPC as history source: blocks/s per instance, CPU ms per block, RSS; beside it Ponder over the same range from the same upstream',
  async run(options: WorkloadOptions): Promise<Figure[]> {
    const shape = options.smoke ? SMOKE : FULL;
    // Build the chain fast (5 ms blocks are a second apart in their timestamps), then serve it at a block a second.
    let upstream = await startBenchNode(upstreamSets(shape, 5), { toml: '' });
    const rounds: Round[] = [];
    const ponderRates: number[] = [];
    const missing = options.smoke ? 'not run in --smoke' : ponderMissing();
    try {
      await upstream.waitFor(`block ${shape.blocks}`, async () => Number(await rpc<string>(upstream, 'eth_blockNumber', [])) >= shape.blocks, 60_000 + shape.blocks * 100);
      upstream = await upstream.restart(upstreamSets(shape, 1000), 120_000, '');
      for (let round = 1; round <= (options.smoke ? 1 : options.rounds); round += 1) {
        const result = await followerRound(upstream);
        rounds.push(result);
        if (missing === null) {
          // The same range as the follower's, less the blocks Ponder would still take as unfinalized.
          const head = Number(await rpc<string>(upstream, 'eth_blockNumber', []));
          ponderRates.push(await ponderRound(upstream, Math.min(result.blocks - 1, head - PONDER_FINALITY_BLOCKS)));
        }
      }
    } finally {
      await upstream.stop();
    }
    const name = 'cold backfill, erc20 instance (verified blocks reduced in chain order)';
    return [
      missing === null
        ? compared(name, 'blocks/s', rounds.map((r) => r.erc20BlocksPerSecond), { name: 'Ponder 0.16 (PGlite), same tokens and upstream', values: ponderRates }, 'higher')
        : figure(`${name} — Ponder ${missing}`, 'blocks/s', rounds.map((r) => r.erc20BlocksPerSecond), 'higher'),
      figure('cold backfill, blobs instance (verified blocks, block-local)', 'blocks/s', rounds.map((r) => r.blobsBlocksPerSecond), 'higher'),
      figure('both backfills, wall time from the follower\'s readiness', 's', rounds.map((r) => r.wallSeconds), 'lower'),
      figure('follower CPU per backfilled block (all threads, both instances)', 'ms/block', rounds.map((r) => r.cpuMsPerBlock), 'lower'),
      figure('follower RSS after the backfills', 'MiB', rounds.map((r) => r.rssMiB), 'lower'),
      figure('follower peak RSS', 'MiB', rounds.map((r) => r.peakMiB), 'lower'),
      figure('blocks in the backfilled range', 'count', rounds.map((r) => r.blocks)),
    ];
  },
};
