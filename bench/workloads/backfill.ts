/**
 * Workload `backfill`: cold backfills end to end (issue 14's Measure). An upstream node (the devnet, every fork at
 * genesis, no reorgs) makes a chain fast, then slows to a block a second so it serves rather than builds; each round a
 * fresh follower node starts on it — live `rpc` source, `rpc` finality, one `rpc` history source, both on the
 * upstream's JSON-RPC on loopback — with a blobs and an erc20 instance at `start_block = 0`. Both are cold-backfilled
 * from the history source (fetch in JSON-RPC batches, convert, verify every block, record, apply or reduce, commit)
 * while the follower's live lane runs. Reports: blocks/s of each instance's backfill job (its range over the time from
 * its start to its end), the whole backfill's wall time, the follower's CPU per backfilled block (all its threads,
 * so load-independent) with and without its live following (the rate measured once the backfills ended, times their
 * wall time), its RSS at the end and its peak. Beside it in the same run (not in --smoke): Ponder 0.16
 * backfilling the same tokens' Transfer logs over the same range from the same upstream, blocks/s.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ponderMissing, PONDER_FINALITY_BLOCKS, startPonder } from '../load/ponder-process.js';
import { trackDirectory } from '../leftovers.js';
import { rpc, startBenchNode, type BenchNode } from '../node.js';
import { cpuSeconds } from '../load/process-cpu.js';
import { compared, figure } from '../figures.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';
import { CACHE_DIR } from '../ingest/chain-cache.js';
import { startServerProcess } from '../load/server-process.js';
import { startNatsProcess } from '../load/nats-process.js';
import { p2pBackfill } from './backfill-p2p.js';

const TOKENS = ['0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506', '0xc9bbd8575d55bf87fce6040031aaa9b3b4b90eae', '0x0fcde9daaf8b24c5b8f5b7b990d2489038e205bd'];
const CHAIN_ID = 1337;

/**
 * The upstream's chain (environment `CDN_BENCH_BACKFILL_CHAIN`, default `devnet`):
 *   devnet   the devnet's default block shape, 12 ordinary and about 3 blob transactions a block, 10,000 blocks;
 *   mainnet  mainnet-shaped blocks, the ingest bench's shape (bench/ingest/chains.ts): about 200 transactions a block
 *            (ERC-20, AMM swaps, set-code, batches) and 6 blob transactions, 1,024 blocks (slow to build: a few
 *            blocks a second);
 *   empty    cheap blocks without transactions, built by the devnet upstream (about 11 blocks/s on a loaded machine);
 *   synthetic the same cheap blocks rendered on the fly by bench/load/synthetic-rpc-server.ts (its own process): no
 *            build, so 100k and 1M-block ranges for memory across range lengths; 100,000 blocks by default;
 *   replay   the ingest bench's mainnet-shaped chain with every fork at genesis (a chain file in bench/cache/, made once: 1,024 blocks of ~200
 *            transactions and 6 blob transactions), every answer rendered once at start and served from memory by
 *            bench/load/replay-rpc-server.ts, with the head fixed at the last block: the upstream costs almost no CPU
 *            and the follower's live lane is idle, so blocks/s is the follower's own backfill rate.
 * `CDN_BENCH_BACKFILL_BLOCKS` overrides the length. The upstream's data directory is built once per chain and length
 * and kept under bench/cache/, then copied for each run, so reruns (an A/B pair) start at once on the same chain.
 * `CDN_BENCH_BACKFILL_BASELINE`: another build's `dist/cli.js`; each round then also backfills a follower of that
 * build from the same upstream (first on odd rounds, second on even ones), reported beside this build's figures.
 * `CDN_BENCH_BACKFILL_JETSTREAM=1`: the follower also publishes to a nats-server of its own (`[delivery.jetstream]`), and
 * the run reports the erc20 instance's publication lag when its backfill ended and the time it took to drain.
 * `CDN_BENCH_BACKFILL_ENCODING` / `CDN_BENCH_BACKFILL_BASELINE_ENCODING`: the followers' history `encoding` (raw, json,
 * auto); the replay and devnet upstreams serve both raw and json blocks.
 * `CDN_BENCH_BACKFILL_SOURCE=p2p` (`CDN_BENCH_BACKFILL_PEERS`, default 4): cold backfills from loopback devp2p peers
 * instead, against the rpc history source in the same run (backfill-p2p.ts).
 */
type ChainKind = 'devnet' | 'mainnet' | 'empty' | 'synthetic' | 'replay';

interface Shape {
  readonly kind: ChainKind;
  /** Blocks the upstream makes before the followers start. */
  readonly blocks: number;
  /** The devnet's block shape. */
  readonly sets: readonly string[];
  /**
   * The follower's `[[sources.history]]` request shape: mainnet-shaped blocks answer ~0.65 MB each with their
   * receipts, so fewer a batch and a longer timeout (a loaded machine renders them slowly).
   */
  readonly historyBatch?: { readonly blocks: number; readonly timeoutMs: number };
  /** Settings of the serving upstream only (not of the cached chain): its JSON-RPC lane's heap for large answers. */
  readonly serveSets?: readonly string[];
  /** Block time while it builds the chain (the wait for it allows 0.3 s a block, 3 s for mainnet-shaped ones). */
  readonly buildBlockTimeMs: number;
}

const CHAINS: Record<ChainKind, Shape> = {
  devnet: { kind: 'devnet', blocks: 10_000, sets: ['devnet.transactions_per_block=12'], buildBlockTimeMs: 5 },
  mainnet: {
    kind: 'mainnet', blocks: 1_024, buildBlockTimeMs: 5, historyBatch: { blocks: 4, timeoutMs: 60_000 }, serveSets: ['actors.rpc.memory_mb=2048'],
    sets: ['devnet.transactions_per_block=200', 'devnet.blob_transactions_per_block=6', 'devnet.max_blobs_per_transaction=3'],
  },
  empty: { kind: 'empty', blocks: 10_000, sets: ['devnet.transactions_per_block=0', 'devnet.blob_transactions_per_block=0'], buildBlockTimeMs: 1 },
  synthetic: { kind: 'synthetic', blocks: 100_000, sets: [], buildBlockTimeMs: 1 },
  replay: { kind: 'replay', blocks: 1_024, sets: [], buildBlockTimeMs: 1, historyBatch: { blocks: 4, timeoutMs: 60_000 } },
};
const SMOKE: Shape = { kind: 'devnet', blocks: 40, sets: ['devnet.transactions_per_block=12'], buildBlockTimeMs: 5 };

function chosenShape(): Shape {
  const kind = (process.env.CDN_BENCH_BACKFILL_CHAIN ?? 'devnet') as ChainKind;
  const shape = CHAINS[kind];
  if (shape === undefined) throw new Error(`CDN_BENCH_BACKFILL_CHAIN=${kind}: expected one of ${Object.keys(CHAINS).join(', ')}`);
  const blocks = process.env.CDN_BENCH_BACKFILL_BLOCKS === undefined ? shape.blocks : Number(process.env.CDN_BENCH_BACKFILL_BLOCKS);
  if (!Number.isSafeInteger(blocks) || blocks < 1) throw new Error(`CDN_BENCH_BACKFILL_BLOCKS=${process.env.CDN_BENCH_BACKFILL_BLOCKS}: expected a positive integer`);
  return { ...shape, blocks };
}

/** The upstream: forks at genesis (a follower takes the schedule from its eth_config), no reorgs, finality 4 behind. */
function upstreamSets(shape: Shape, blockTimeMs: number): string[] {
  return [
    `devnet.block_time_ms=${blockTimeMs}`, ...shape.sets, 'devnet.reorg_every=0', 'devnet.finality_lag=4',
    'devnet.prague_after_seconds=0', 'devnet.osaka_after_seconds=0', 'devnet.bpo1_after_seconds=0',
  ];
}

/** Where the built upstream chain of `shape` is kept (its data directory), keyed by everything that shapes it. */
function upstreamCache(shape: Shape): string {
  const key = createHash('sha256').update(JSON.stringify({ generation: 1, sets: upstreamSets(shape, shape.buildBlockTimeMs), blocks: shape.blocks })).digest('hex').slice(0, 12);
  return join(CACHE_DIR, `backfill-upstream-${shape.kind}-${shape.blocks}-${key}`);
}

/**
 * The upstream serving the chain of `shape` at a block a second: from the cache when it holds the chain, else built
 * fast (5 ms blocks are a second apart in their timestamps) and kept in the cache (not in --smoke) before serving.
 */
async function startUpstream(shape: Shape, smoke: boolean): Promise<Upstream> {
  if (shape.kind === 'synthetic') {
    // Chains its block hashes at start (a few seconds per 100k blocks on a loaded machine) before it listens.
    const server = await startServerProcess('synthetic-rpc-server', ['--blocks', String(shape.blocks)], 600_000);
    return { rpcUrl: server.baseUrl, pid: server.pid, stop: () => server.stop() };
  }
  if (shape.kind === 'replay') {
    // Renders every answer at start (sender recovery included: tens of seconds), after generating the chain file
    // when bench/cache/ lacks it (minutes).
    // Past the cached chain's 1,024 blocks (CDN_BENCH_BACKFILL_BLOCKS), a longer chain of the same shape: generated once
    // (a few blocks a second, so about an hour for 10,000) and kept in bench/cache/.
    const length = smoke ? [] : ['--length', String(Math.max(shape.blocks, 1_024))];
    const server = await startServerProcess('replay-rpc-server', ['--chain', smoke ? 'smoke' : 'mainnet', ...length, '--blocks', String(shape.blocks)], 6 * 3_600_000);
    // Each fresh follower needs the head's first moves (see the server): they start again before each one.
    const rewind = async () => { await rpc<string>({ rpcUrl: server.baseUrl }, 'bench_rewindHead', []); };
    return { rpcUrl: server.baseUrl, pid: server.pid, stop: () => server.stop(), rewind };
  }
  const cache = upstreamCache(shape);
  const serving = [...upstreamSets(shape, 1000), ...(shape.serveSets ?? [])];
  if (!smoke && existsSync(join(cache, 'data'))) return startBenchNode(serving, { toml: '', seedDataDir: join(cache, 'data'), readyTimeoutMs: 600_000 });
  // A devnet building large blocks fast may take a while to answer its own finality at start (a loaded machine).
  const upstream = await startBenchNode(upstreamSets(shape, shape.buildBlockTimeMs), { toml: '', readyTimeoutMs: 300_000 });
  try {
    await upstream.waitFor(`block ${shape.blocks}`, async () => Number(await rpc<string>(upstream, 'eth_blockNumber', [])) >= shape.blocks, 120_000 + shape.blocks * (shape.kind === 'mainnet' ? 3_000 : 300));
  } catch (error) {
    await upstream.stop();
    throw error;
  }
  return upstream.restart(serving, 600_000, '', async () => {
    if (smoke) return;
    mkdirSync(CACHE_DIR, { recursive: true });
    const building = `${cache}.${process.pid}.tmp`;
    cpSync(upstream.dataDir, join(building, 'data'), { recursive: true });
    renameSync(building, cache);
  });
}

/** What a follower needs of its upstream: the devnet node, or the synthetic or replay server. */
type Upstream = Pick<BenchNode, 'rpcUrl' | 'pid' | 'stop'> & { readonly rewind?: () => Promise<void> };

/**
 * The history source's `encoding` for this build's followers (`CDN_BENCH_BACKFILL_ENCODING`) and the baseline's
 * (`CDN_BENCH_BACKFILL_BASELINE_ENCODING`): `raw`, `json` or `auto`; unset, the key is left out (the node's default,
 * `auto`, and a build from before the key existed still starts).
 */
function encodingLine(baseline: boolean): string[] {
  const value = process.env[baseline ? 'CDN_BENCH_BACKFILL_BASELINE_ENCODING' : 'CDN_BENCH_BACKFILL_ENCODING'];
  if (value === undefined || value === '') return [];
  if (!['raw', 'json', 'auto'].includes(value)) throw new Error(`${baseline ? 'CDN_BENCH_BACKFILL_BASELINE_ENCODING' : 'CDN_BENCH_BACKFILL_ENCODING'}=${value}: expected raw, json or auto`);
  return [`encoding = "${value}"`];
}

function followerToml(upstream: string, shape: Shape, baseline = false, natsUrl: string | null = null): string {
  const batch = shape.historyBatch ? [`batch_blocks = ${shape.historyBatch.blocks}`, `request_timeout_ms = ${shape.historyBatch.timeoutMs}`] : [];
  return [
    ...(natsUrl ? ['[delivery.jetstream]', 'enabled = true', `servers = ["${natsUrl}"]`] : []),
    '[sources.live]', 'kind = "rpc"', `url = "${upstream}"`, 'poll_interval_ms = 200',
    '[finality]', 'kind = "rpc"', 'poll_interval_ms = 200',
    '[[sources.history]]', 'id = "upstream"', 'kind = "rpc"', `url = "${upstream}"`, ...batch, ...encodingLine(baseline),
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

/**
 * VmRSS and VmHWM (peak) of a process, MiB, and VmRSS's two parts: anonymous memory (heaps, buffers: what a leak
 * grows) and file-backed pages (mostly the LMDB store's memory map, which grows with the data the node wrote and
 * read, and which the kernel reclaims under pressure).
 */
function memoryOf(pid: number): { rssMiB: number; peakMiB: number; anonMiB: number; fileMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024, anonMiB: kib('RssAnon') / 1024, fileMiB: (kib('RssFile') + kib('RssShmem')) / 1024 };
}

interface Round {
  readonly blobsBlocksPerSecond: number;
  readonly erc20BlocksPerSecond: number;
  readonly wallSeconds: number;
  readonly blocks: number;
  readonly cpuMsPerBlock: number;
  /** `cpuMsPerBlock` less what the follower spends at its live-only rate over the backfill's wall time. */
  readonly backfillCpuMsPerBlock: number;
  /** The follower's CPU per second of wall time once the backfills ended (following the upstream only), ms/s. */
  readonly liveCpuMsPerSecond: number;
  /** The upstream's CPU over the backfills, per backfilled block (it serves and, but for `replay`, makes a block a second). */
  readonly upstreamCpuMsPerBlock: number;
  readonly rssMiB: number;
  readonly peakMiB: number;
  readonly anonMiB: number;
  readonly fileMiB: number;
  /** VmRSS sampled every second while the backfills ran: median and 95th percentile, MiB. */
  readonly rssDuringMedianMiB: number;
  readonly rssDuringP95MiB: number;
  /** VmRSS at the end of the live-only window that follows the backfills (LIVE_SAMPLE_SECONDS later), MiB. */
  readonly rssSettledMiB: number;
  /** With CDN_BENCH_BACKFILL_JETSTREAM=1: the erc20 instance's publication lag when its backfill ended, and how long it took to drain. */
  readonly publication: { readonly lagAtEnd: number; readonly drainSeconds: number; readonly changes: number } | null;
}

/** The follower's publication lag of `instance` (changes), from its /metrics. */
async function publicationLag(node: BenchNode, instance: string): Promise<number> {
  const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
  const match = new RegExp(`^chain_node_jetstream_publication_lag_changes\\{[^}]*instance="${instance}"[^}]*\\} (\\S+)$`, 'm').exec(text);
  if (!match) throw new Error(`the follower's /metrics has no publication lag of ${instance}`);
  return Number(match[1]);
}

/** The value at fraction `q` (0–1) of the sorted samples, nearest rank. */
function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * Seconds of live-only following sampled after the backfills (CDN_BENCH_BACKFILL_LIVE_SAMPLE_S, default 30): at a
 * block a second and CPU time counted in 10 ms ticks, enough for a rate within a few percent.
 */
const LIVE_SAMPLE_SECONDS = Number(process.env.CDN_BENCH_BACKFILL_LIVE_SAMPLE_S ?? 30);

/** One fresh follower: starts, backfills both instances, and reports. */
async function followerRound(upstream: Upstream, shape: Shape, cli?: string, natsUrl: string | null = null): Promise<Round> {
  // CDN_BENCH_BACKFILL_CPU_PROF=<dir>: this build's follower runs with --cpu-prof (a profile per thread, written at its
  // exit into <dir>).
  const profileDir = cli === undefined ? process.env.CDN_BENCH_BACKFILL_CPU_PROF : undefined;
  await upstream.rewind?.();
  const follower = await startBenchNode(['runtime.shutdown_timeout_seconds=3'], {
    toml: followerToml(upstream.rpcUrl, shape, cli !== undefined, natsUrl), readyTimeoutMs: 60_000, ...(cli ? { cli } : {}),
    ...(profileDir ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } : {}),
  });
  let sampler: NodeJS.Timeout | undefined;
  try {
    const cpuAtStart = cpuSeconds(follower.pid);
    const upstreamCpuAtStart = cpuSeconds(upstream.pid);
    const started = performance.now();
    // One RSS sample a second while the backfills run: "after" is one instant of a saw-tooth (the map's releases,
    // the V8 heaps' collections), the samples show the level the process holds through the job.
    const rssSamples: number[] = [];
    sampler = setInterval(() => rssSamples.push(memoryOf(follower.pid).rssMiB), 1000);
    let jobs: JobView[] = [];
    // The jobs exist once the follower has recorded a finalized block (the split of history and live): within
    // seconds of a moving upstream. An upstream whose head stands still never gives one, and the bench says so
    // instead of waiting out the run's limit.
    try {
      await follower.waitFor('its two cold backfill jobs', async () => (await coldJobs(follower)).length === 2, 300_000);
    } catch (error) {
      const processors = await fetch(`${follower.baseUrl}/v1/processors`).then((r) => r.text()).catch((e: unknown) => String(e));
      throw new Error(`${(error as Error).message}
the processors: ${processors}`);
    }
    await follower.waitFor('both cold backfills ended', async () => {
      jobs = await coldJobs(follower);
      return jobs.length === 2 && jobs.every((job) => job.state === 'completed' || job.state === 'failed');
    }, 7_200_000);
    const failed = jobs.find((job) => job.state === 'failed');
    if (failed) throw new Error(`cold backfill ${failed.id} failed: ${failed.lastError?.message}`);
    const wallSeconds = (performance.now() - started) / 1000;
    // The publisher against the fastest committing kind: how far JetStream is behind when the erc20 backfill ends,
    // and how long until it has every change (the lag read once a second would hide a drain under a second).
    let publication: Round['publication'] = null;
    if (natsUrl) {
      const lagAtEnd = await publicationLag(follower, 'erc20');
      const drainStarted = performance.now();
      await follower.waitFor('the publication lag drained', async () => (await publicationLag(follower, 'erc20')) === 0, 600_000);
      const head = ((await (await fetch(`${follower.baseUrl}/v1/processors/erc20/changes/head`)).json()) as { sequence: string }).sequence;
      publication = { lagAtEnd, drainSeconds: (performance.now() - drainStarted) / 1000, changes: Number(head) };
    }
    const cpuUsed = cpuSeconds(follower.pid) - cpuAtStart;
    const upstreamCpuUsed = cpuSeconds(upstream.pid) - upstreamCpuAtStart;
    const rate = (id: string) => {
      const job = jobs.find((j) => j.id === id)!;
      return (job.toBlock - job.fromBlock + 1) / ((Date.parse(job.finishedAt!) - Date.parse(job.startedAt!)) / 1000);
    };
    const blocks = jobs[0]!.toBlock - jobs[0]!.fromBlock + 1;
    clearInterval(sampler);
    const memory = memoryOf(follower.pid);
    rssSamples.push(memory.rssMiB);
    // The live lane's share: the upstream makes a block a second throughout and the follower follows it (live source,
    // chain, finality, and both instances applying each new block), so the CPU above includes that for as long as
    // the backfills took. Its rate is measured once the backfills ended, when following is all the follower does.
    const liveStarted = performance.now();
    const cpuAtLive = cpuSeconds(follower.pid);
    await new Promise((resolve) => setTimeout(resolve, LIVE_SAMPLE_SECONDS * 1000));
    const liveCoresUsed = (cpuSeconds(follower.pid) - cpuAtLive) / ((performance.now() - liveStarted) / 1000);
    const settled = memoryOf(follower.pid);
    return {
      rssDuringMedianMiB: quantile(rssSamples, 0.5), rssDuringP95MiB: quantile(rssSamples, 0.95), rssSettledMiB: settled.rssMiB,
      blobsBlocksPerSecond: rate('cb-blobs'), erc20BlocksPerSecond: rate('cb-erc20'), wallSeconds, blocks,
      cpuMsPerBlock: (cpuUsed * 1000) / blocks, backfillCpuMsPerBlock: ((cpuUsed - liveCoresUsed * wallSeconds) * 1000) / blocks,
      liveCpuMsPerSecond: liveCoresUsed * 1000, upstreamCpuMsPerBlock: (upstreamCpuUsed * 1000) / blocks, ...memory, publication,
    };
  } finally {
    clearInterval(sampler);
    await follower.stop();
  }
}

/** Ponder over the Transfer logs of [0, endBlock] from the upstream: blocks/s of its backfill. */
async function ponderRound(upstream: Upstream, endBlock: number): Promise<number> {
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
  description: 'cold backfills of a blobs and an erc20 instance (start_block = 0) on a fresh follower from an upstream node\'s JSON-RPC as history source: blocks/s per instance, CPU ms per block, RSS; beside it Ponder over the same range from the same upstream (CDN_BENCH_BACKFILL_CHAIN=devnet|mainnet|empty|synthetic|replay, CDN_BENCH_BACKFILL_BLOCKS, CDN_BENCH_BACKFILL_BASELINE=another build\'s dist/cli.js; CDN_BENCH_BACKFILL_SOURCE=p2p with CDN_BENCH_BACKFILL_PEERS: from loopback devp2p peers, beside the rpc source)',
  async run(options: WorkloadOptions): Promise<Figure[]> {
    const source = process.env.CDN_BENCH_BACKFILL_SOURCE ?? 'rpc';
    if (source === 'p2p') return p2pBackfill(options);
    if (source !== 'rpc') throw new Error(`CDN_BENCH_BACKFILL_SOURCE=${source}: expected rpc or p2p`);
    const shape = options.smoke ? SMOKE : chosenShape();
    const baselineCli = options.smoke ? undefined : process.env.CDN_BENCH_BACKFILL_BASELINE;
    const upstream = await startUpstream(shape, options.smoke);
    const natsDir = process.env.CDN_BENCH_BACKFILL_JETSTREAM === '1' ? mkdtempSync(join(tmpdir(), 'cdn-bench-nats-')) : null;
    const nats = natsDir ? await startNatsProcess(natsDir) : null;
    const rounds: Round[] = [];
    const baselineRounds: Round[] = [];
    const ponderRates: number[] = [];
    const missing = options.smoke ? 'not run in --smoke' : shape.kind === 'empty' || shape.kind === 'synthetic' ? 'not run over empty blocks' : process.env.CDN_BENCH_BACKFILL_PONDER === '0' ? 'not run (CDN_BENCH_BACKFILL_PONDER=0)' : ponderMissing();
    try {
      for (let round = 1; round <= (options.smoke ? 1 : options.rounds); round += 1) {
        if (baselineCli !== undefined && round % 2 === 1) baselineRounds.push(await followerRound(upstream, shape, baselineCli));
        const result = await followerRound(upstream, shape, undefined, nats?.url ?? null);
        rounds.push(result);
        if (baselineCli !== undefined && round % 2 === 0) baselineRounds.push(await followerRound(upstream, shape, baselineCli));
        if (missing === null) {
          // The same range as the follower's, less the blocks Ponder would still take as unfinalized.
          const head = Number(await rpc<string>(upstream, 'eth_blockNumber', []));
          ponderRates.push(await ponderRound(upstream, Math.min(result.blocks - 1, head - PONDER_FINALITY_BLOCKS)));
        }
      }
    } finally {
      await upstream.stop();
      await nats?.stop();
      if (natsDir) rmSync(natsDir, { recursive: true, force: true });
    }
    const chain = `${shape.kind} chain`;
    const published = rounds.flatMap((r) => (r.publication ? [r.publication] : []));
    const name = `cold backfill, erc20 instance (verified blocks reduced in chain order), ${chain}`;
    const beside = (figureName: string, unit: string, pick: (r: Round) => number, better?: Figure['better']): Figure => (baselineCli === undefined
      ? figure(figureName, unit, rounds.map(pick), better)
      : compared(figureName, unit, rounds.map(pick), { name: `baseline build ${baselineCli}`, values: baselineRounds.map(pick) }, better));
    return [
      missing === null
        ? compared(name, 'blocks/s', rounds.map((r) => r.erc20BlocksPerSecond), { name: 'Ponder 0.16 (PGlite), same tokens and upstream', values: ponderRates }, 'higher')
        : beside(`${name} — Ponder ${missing}`, 'blocks/s', (r) => r.erc20BlocksPerSecond, 'higher'),
      ...(missing === null && baselineCli !== undefined ? [beside(`${name}, against the baseline build`, 'blocks/s', (r) => r.erc20BlocksPerSecond, 'higher')] : []),
      beside(`cold backfill, blobs instance (verified blocks, block-local), ${chain}`, 'blocks/s', (r) => r.blobsBlocksPerSecond, 'higher'),
      beside('both backfills, wall time from the follower\'s readiness', 's', (r) => r.wallSeconds, 'lower'),
      beside('follower CPU per backfilled block (all threads, both instances)', 'ms/block', (r) => r.cpuMsPerBlock, 'lower'),
      beside('follower CPU per backfilled block, live following excluded (all threads less the live-only rate × wall time)', 'ms/block', (r) => r.backfillCpuMsPerBlock, 'lower'),
      beside('follower CPU while only following live, after the backfills (a block a second)', 'ms/s', (r) => r.liveCpuMsPerSecond, 'lower'),
      beside(`upstream CPU per backfilled block (${shape.kind === 'replay' ? 'serving answers rendered at start' : 'serving, and making a block a second'})`, 'ms/block', (r) => r.upstreamCpuMsPerBlock, 'lower'),
      beside('follower RSS after the backfills', 'MiB', (r) => r.rssMiB, 'lower'),
      beside('follower peak RSS', 'MiB', (r) => r.peakMiB, 'lower'),
      beside('follower RSS during the backfills, median of one sample a second', 'MiB', (r) => r.rssDuringMedianMiB, 'lower'),
      beside('follower RSS during the backfills, 95th percentile of one sample a second', 'MiB', (r) => r.rssDuringP95MiB, 'lower'),
      beside(`follower RSS settled: ${LIVE_SAMPLE_SECONDS} s of live following after the backfills`, 'MiB', (r) => r.rssSettledMiB, 'lower'),
      beside('follower RSS after, anonymous (heaps, buffers)', 'MiB', (r) => r.anonMiB, 'lower'),
      beside('follower RSS after, file-backed (the store\'s memory map)', 'MiB', (r) => r.fileMiB, 'lower'),
      figure('blocks in the backfilled range', 'count', rounds.map((r) => r.blocks)),
      ...(published.length === rounds.length && published.length > 0 ? [
        figure('JetStream publication lag of the erc20 instance when its backfill ended', 'changes', published.map((p) => p.lagAtEnd), 'lower'),
        figure('time for that lag to drain', 's', published.map((p) => p.drainSeconds), 'lower'),
        figure('erc20 changes published (the change log head at the drain)', 'changes', published.map((p) => p.changes)),
      ] : []),
    ];
  },
};
