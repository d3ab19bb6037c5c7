/**
 * The backfill workload with `CDN_BENCH_BACKFILL_SOURCE=p2p` (issue 31's Measure): cold backfills from the node's
 * devp2p peers. `CDN_BENCH_BACKFILL_PEERS` (default 4; 2 in --smoke) loopback peers, each its own process
 * (bench/load/history-peers.ts), serve the mainnet-shaped replay chain over RLPx/eth from the chain file in
 * bench/cache/ (`CDN_BENCH_BACKFILL_BLOCKS` long, default 1,024; a longer chain is generated once, a few blocks a
 * second). Each round: the blocks fetched, verified and recorded with no node and no processor in the bench process
 * itself (history-p2p-pass.ts).
 * Then a node per kind (`CDN_BENCH_BACKFILL_P2P_NODE=0` leaves them out): `[sources.live] kind = "p2p"` with those
 * peers as trusted peers and `start = "finalized"`, `finality.kind = "beacon_api"` by light-client proof from the
 * first peer, which also serves the chain's consensus side as the devnet does (history-peers.ts `--beacon-api`; the
 * checkpoint root: its finalized block root when the round starts, as an operator takes a recent root they trust),
 * one `[[sources.history]] kind = "p2p"`, and one instance (`start_block = 0`: blobs, then erc20). Its chain begins at
 * the finalized block, so the instance is cold-backfilled below it from the peers: blocks 0 to that block, the
 * chain's finalized range.
 * The pass: `CDN_BENCH_BACKFILL_PASS_BATCH`, default 16 blocks a piece, and
 * `CDN_BENCH_BACKFILL_PASS_CONCURRENCY`, default 4 pieces in flight (the source's defaults).
 * The baseline in the same run: instances cold-backfilled through the `rpc` history source from the replay
 * JSON-RPC server serving the same chain (`CDN_BENCH_BACKFILL_RPC=0` leaves it out; `CDN_BENCH_BACKFILL_RPC_KINDS`,
 * default blobs,erc20, the kinds it backfills; each node figure is reported beside the rpc one, with the ratio).
 *
 * Reported per instance kind and source: blocks/s of the cold job (its start to its end), the follower's CPU per block
 * (all its threads, from its readiness to the job's end), the serving side's CPU per block (all peers together, or the JSON-RPC server), the
 * follower's RSS after the job, its peak, and the median and 95th percentile of one sample a second during it.
 * `CDN_BENCH_BACKFILL_CPU_PROF=<dir>`: the p2p followers run with --cpu-prof (a profile per thread).
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { devnetForkSchedule, devnetGenesis, resolveDevnetConfig, type DevnetConfig } from '../../net/devnet/index.js';
import type { ChainIdentity } from '../../net/p2p/status.js';
import { historyPass, type PassResult } from './history-p2p-pass.js';
import { cachedChain } from '../ingest/chain-cache.js';
import { historyChain } from '../load/history-chain.js';
import { cpuSeconds } from '../load/process-cpu.js';
import { startServerProcess } from '../load/server-process.js';
import { loadScript, spawnNodeScript, stopProcess, tailOutput } from '../load/spawn.js';
import { compared, figure } from '../figures.js';
import { rpc, startBenchNode, type BenchNode } from '../node.js';
import type { Figure, WorkloadOptions } from '../workload.js';

const TOKENS = ['0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506', '0xc9bbd8575d55bf87fce6040031aaa9b3b4b90eae', '0x0fcde9daaf8b24c5b8f5b7b990d2489038e205bd'];
const KINDS = ['blobs', 'erc20'] as const;
type Kind = (typeof KINDS)[number];
const FINALITY_LAG = 4;
/**
 * Kinds the rpc baseline backfills (`CDN_BENCH_BACKFILL_RPC_KINDS`, default blobs,erc20; the node rounds from the peers
 * backfill both): at ~170 blocks/s a 10,000-block rpc backfill takes about a minute a kind.
 */
const RPC_KINDS = (process.env.CDN_BENCH_BACKFILL_RPC_KINDS ?? 'blobs,erc20').split(',').filter((k): k is Kind => (KINDS as readonly string[]).includes(k));

interface Setup { readonly chainName: 'mainnet' | 'smoke'; readonly length: number | undefined; readonly blocks: number; readonly peers: number; readonly config: DevnetConfig }

function setupOf(smoke: boolean): Setup {
  const peers = Number(process.env.CDN_BENCH_BACKFILL_PEERS ?? (smoke ? 2 : 4));
  if (!Number.isSafeInteger(peers) || peers < 1) throw new Error(`CDN_BENCH_BACKFILL_PEERS=${process.env.CDN_BENCH_BACKFILL_PEERS}: expected a positive integer`);
  if (smoke) {
    const chain = historyChain('smoke');
    return { chainName: 'smoke', length: undefined, blocks: chain.blocks, peers, config: resolveDevnetConfig(chain.devnet) };
  }
  const blocks = Number(process.env.CDN_BENCH_BACKFILL_BLOCKS ?? 1_024);
  if (!Number.isSafeInteger(blocks) || blocks < 1) throw new Error(`CDN_BENCH_BACKFILL_BLOCKS=${process.env.CDN_BENCH_BACKFILL_BLOCKS}: expected a positive integer`);
  const length = Math.max(blocks, 1_024);
  return { chainName: 'mainnet', length, blocks, peers, config: resolveDevnetConfig(historyChain('mainnet', length).devnet) };
}

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name}=${process.env[name]}: expected a positive integer`);
  return value;
}

const chainArgs = (setup: Setup) => ['--chain', setup.chainName, ...(setup.length === undefined ? [] : ['--length', String(setup.length)]), '--blocks', String(setup.blocks)];

/** The follower's `[devnet]`: the chain's identity (genesis, fork schedule) and the devnet finality rule. */
function devnetSets(config: DevnetConfig): string[] {
  return [
    `devnet.seed=${String(config.seed)}`, `devnet.chain_id=${config.chainId}`, `devnet.accounts=${config.accounts}`,
    `devnet.transactions_per_block=${config.transactionsPerBlock}`, `devnet.blob_transactions_per_block=${config.blobTransactionsPerBlock}`,
    `devnet.max_blobs_per_transaction=${config.maxBlobsPerTransaction}`, 'devnet.reorg_every=0', `devnet.finality_lag=${FINALITY_LAG}`,
    'devnet.prague_after_seconds=0', 'devnet.osaka_after_seconds=0', 'devnet.bpo1_after_seconds=0', 'runtime.shutdown_timeout_seconds=3',
  ];
}

/** The serving peers; `beaconApi`: the first one's Beacon API (history-peers.ts `--beacon-api`), when asked for. */
interface Peers { readonly enodes: string[]; readonly pids: number[]; readonly beaconApi: string | null; send(line: 'go' | 'rewind'): void; stop(): Promise<void> }

/** Blocks below the tip the peers serve until `go` (history-peers.ts): a fresh follower's chain ends there at first. */
const ADVANCE = 8;

/** `count` serving peers, each its own process, started one after another (each indexes the chain file first). */
async function startPeers(setup: Setup, beaconApi: boolean): Promise<Peers> {
  const children: ReturnType<typeof spawnNodeScript>[] = [];
  const enodes: string[] = [];
  let beaconUrl: string | null = null;
  const stop = async () => { await Promise.all(children.map((child) => stopProcess(child, 5000))); };
  try {
    for (let i = 0; i < setup.peers; i += 1) {
      const child = spawnNodeScript(loadScript('history-peers'), [...chainArgs(setup), '--advance', String(ADVANCE), ...(beaconApi && i === 0 ? ['--beacon-api'] : [])], 'pipe');
      child.stdin!.on('error', () => undefined);
      children.push(child);
      const output = tailOutput(child);
      const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
      if (first.done) throw new Error(`history peer ${i} ended before listening: ${output.join(' | ')}`);
      const listening = JSON.parse(first.value) as { enode: string; beaconApi?: string };
      enodes.push(listening.enode);
      beaconUrl ??= listening.beaconApi ?? null;
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { enodes, pids: children.map((child) => child.pid!), beaconApi: beaconUrl, send: (line) => { for (const child of children) child.stdin!.write(`${line}\n`); }, stop };
}

function liveToml(peers: Peers, checkpointRoot: string): string[] {
  return [
    '[sources.live]', 'kind = "p2p"', `trusted_peers = [${peers.enodes.map((e) => `"${e}"`).join(', ')}]`, 'poll_interval_ms = 200', `minimum_peers = ${peers.enodes.length}`, 'start = "finalized"',
    '[finality]', 'kind = "beacon_api"', `urls = ["${peers.beaconApi}"]`, `checkpoint_root = "${checkpointRoot}"`, 'poll_interval_ms = 200',
    '[[sources.history]]', 'id = "peers"', 'kind = "p2p"',
  ];
}

function processorToml(kind: Kind): string[] {
  return ['[[processors]]', `id = "${kind}"`, `kind = "${kind}"`, 'start_block = 0', ...(kind === 'erc20' ? [`tokens = [${TOKENS.map((t) => `"${t}"`).join(', ')}]`] : [])];
}

/** The root of the block the peers' Beacon API calls finalized now: the follower's weak-subjectivity checkpoint. */
async function finalizedRoot(beaconApi: string): Promise<string> {
  const response = await fetch(`${beaconApi}/eth/v1/beacon/headers/finalized`);
  if (!response.ok) throw new Error(`the peers' Beacon API answered ${response.status} for the finalized header: ${await response.text()}`);
  return ((await response.json()) as { data: { root: string } }).data.root;
}

interface JobView { id: string; state: string; fromBlock: number; toBlock: number; startedAt: string | null; finishedAt: string | null; lastError: { message: string } | null }

async function coldJobs(node: BenchNode): Promise<JobView[]> {
  return ((await (await fetch(`${node.baseUrl}/admin/v1/materialization-jobs`)).json()) as { data: JobView[] }).data;
}

function rssOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

function quantile(samples: readonly number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

interface Round {
  readonly blocks: number; readonly blocksPerSecond: number; readonly cpuMsPerBlock: number; readonly servingCpuMsPerBlock: number;
  readonly rssMiB: number; readonly peakMiB: number; readonly rssDuringMedianMiB: number; readonly rssDuringP95MiB: number;
}

/** One fresh follower with one instance: waits for its cold job, measures it from its start to its end. */
async function measuredJob(follower: BenchNode, kind: Kind, servingPids: readonly number[], create: () => Promise<void> = async () => undefined): Promise<Round> {
  const serving = () => servingPids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rssOf(follower.pid).rssMiB), 1000);
  try {
    const cpu = cpuSeconds(follower.pid);
    const servingCpu = serving();
    await create();
    try {
      await follower.waitFor(`the cold backfill job of ${kind}`, async () => (await coldJobs(follower)).length === 1, 120_000);
    } catch (error) {
      const status = await fetch(`${follower.baseUrl}/v1/processors/${kind}/status`).then((r) => r.text()).catch((e: unknown) => String(e));
      throw new Error(`${(error as Error).message}\nthe instance: ${status}`);
    }
    let job: JobView | undefined;
    await follower.waitFor(`the cold backfill of ${kind} ended`, async () => {
      job = (await coldJobs(follower))[0];
      return job?.state === 'completed' || job?.state === 'failed';
    }, 7_200_000);
    const cpuUsed = cpuSeconds(follower.pid) - cpu;
    const servingUsed = serving() - servingCpu;
    if (job!.state === 'failed') throw new Error(`cold backfill ${job!.id} failed: ${job!.lastError?.message}`);
    const blocks = job!.toBlock - job!.fromBlock + 1;
    const seconds = (Date.parse(job!.finishedAt!) - Date.parse(job!.startedAt!)) / 1000;
    const memory = rssOf(follower.pid);
    samples.push(memory.rssMiB);
    return {
      blocks, blocksPerSecond: blocks / seconds, cpuMsPerBlock: (cpuUsed * 1000) / blocks, servingCpuMsPerBlock: (servingUsed * 1000) / blocks,
      ...memory, rssDuringMedianMiB: quantile(samples, 0.5), rssDuringP95MiB: quantile(samples, 0.95),
    };
  } finally {
    clearInterval(sampler);
  }
}

/** A fresh follower beginning at the peers' finalized block, its `kind` instance cold-backfilled below it from them. */
async function p2pRound(setup: Setup, peers: Peers, kind: Kind): Promise<Round> {
  const profileDir = process.env.CDN_BENCH_BACKFILL_CPU_PROF;
  peers.send('rewind');
  const toml = [...liveToml(peers, await finalizedRoot(peers.beaconApi!)), ...processorToml(kind), ''].join('\n');
  const follower = await startBenchNode(devnetSets(setup.config), {
    toml, readyTimeoutMs: 300_000, ...(profileDir ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } : {}),
  });
  // The last few blocks, followed live while the backfill runs (as the rpc baseline's upstream moves its head).
  peers.send('go');
  try {
    return await measuredJob(follower, kind, peers.pids);
  } finally {
    await follower.stop();
  }
}

/** The baseline: the replay JSON-RPC server (same chain) as live source, finality and `rpc` history source. */
async function rpcRound(setup: Setup, upstream: { baseUrl: string; pid: number }, kind: Kind): Promise<Round> {
  await rpc<string>({ rpcUrl: upstream.baseUrl }, 'bench_rewindHead', []);
  const toml = [
    '[sources.live]', 'kind = "rpc"', `url = "${upstream.baseUrl}"`, 'poll_interval_ms = 200', '[finality]', 'kind = "rpc"', 'poll_interval_ms = 200',
    '[[sources.history]]', 'id = "upstream"', 'kind = "rpc"', `url = "${upstream.baseUrl}"`, 'batch_blocks = 4', 'request_timeout_ms = 60000',
    ...processorToml(kind), '',
  ].join('\n');
  const follower = await startBenchNode(['runtime.shutdown_timeout_seconds=3'], { toml, readyTimeoutMs: 120_000 });
  try {
    return await measuredJob(follower, kind, [upstream.pid]);
  } finally {
    await follower.stop();
  }
}

export async function p2pBackfill(options: WorkloadOptions): Promise<Figure[]> {
  const setup = setupOf(options.smoke);
  // The chain file first (generated once when bench/cache/ lacks it), so the peers only index it.
  await cachedChain(historyChain(setup.chainName, setup.length));
  const withRpc = process.env.CDN_BENCH_BACKFILL_RPC !== '0';
  const withNode = process.env.CDN_BENCH_BACKFILL_P2P_NODE !== '0';
  const rounds = new Map<Kind, Round[]>(KINDS.map((kind) => [kind, []]));
  const rpcRounds = new Map<Kind, Round[]>(KINDS.map((kind) => [kind, []]));
  const passes: PassResult[] = [];
  const passShape = { batch: positive('CDN_BENCH_BACKFILL_PASS_BATCH', 16), concurrency: positive('CDN_BENCH_BACKFILL_PASS_CONCURRENCY', 4), threads: options.config?.runtime.pool_threads ?? 2 };
  const genesis = devnetGenesis(setup.config);
  const identity: ChainIdentity = { chainId: setup.config.chainId, schedule: devnetForkSchedule(setup.config), genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } };
  const peers = await startPeers(setup, withNode);
  try {
    for (let round = 1; round <= (options.smoke ? 1 : options.rounds); round += 1) {
      passes.push(await historyPass(identity, setup.blocks - ADVANCE, peers.enodes, peers.pids, passShape));
      if (withNode) for (const kind of KINDS) rounds.get(kind)!.push(await p2pRound(setup, peers, kind));
    }
  } finally {
    await peers.stop();
  }
  if (withRpc) {
    // After the peers stopped: the replay server renders and holds every answer (GBs for 10,000 blocks).
    const upstream = await startServerProcess('replay-rpc-server', [...chainArgs(setup)], 6 * 3_600_000);
    try {
      for (let round = 1; round <= (options.smoke ? 1 : options.rounds); round += 1) {
        for (const kind of RPC_KINDS) rpcRounds.get(kind)!.push(await rpcRound(setup, upstream, kind));
      }
    } finally {
      await upstream.stop();
    }
  }
  const label = `${setup.peers} loopback peer${setup.peers === 1 ? '' : 's'}, ${setup.chainName === 'smoke' ? 'smoke' : 'mainnet-shaped'} chain`;
  const figures: Figure[] = [
    figure(`fetch + verify + record, no processors, in the bench process (${label}; pieces of ${passShape.batch}, ${passShape.concurrency} in flight, ${passShape.threads} verify threads)`, 'blocks/s', passes.map((r) => r.blocksPerSecond), 'higher'),
    figure('no processors: CPU per block of the bench process (all threads)', 'ms/block', passes.map((r) => r.cpuMsPerBlock), 'lower'),
    figure('no processors: serving CPU per block (all peers together)', 'ms/block', passes.map((r) => r.servingCpuMsPerBlock), 'lower'),
    figure('no processors: RSS of the bench process after the pass (with the pass store\'s mapped pages)', 'MiB', passes.map((r) => r.rssMiB), 'lower'),
    figure('no processors: anonymous RSS of the bench process after the pass (heaps, buffers)', 'MiB', passes.map((r) => r.anonMiB), 'lower'),
  ];
  for (const kind of withNode ? KINDS : []) {
    const p2p = rounds.get(kind)!;
    const baseline = rpcRounds.get(kind)!;
    const beside = (name: string, unit: string, pick: (r: Round) => number, better: Figure['better']): Figure => (baseline.length > 0
      ? compared(name, unit, p2p.map(pick), { name: 'rpc history source (replay JSON-RPC server, same chain)', values: baseline.map(pick) }, better)
      : figure(name, unit, p2p.map(pick), better));
    figures.push(
      beside(`cold backfill of a ${kind} instance from the p2p history source (${label}; live p2p from the finalized block, beacon_api light-client finality)`, 'blocks/s', (r) => r.blocksPerSecond, 'higher'),
      beside(`${kind}: blocks backfilled (0 to the finalized block the follower began at)`, 'count', (r) => r.blocks, undefined),
      beside(`${kind}: follower CPU per backfilled block (all threads)`, 'ms/block', (r) => r.cpuMsPerBlock, 'lower'),
      beside(`${kind}: serving CPU per backfilled block (all peers together; the JSON-RPC server for rpc)`, 'ms/block', (r) => r.servingCpuMsPerBlock, 'lower'),
      beside(`${kind}: follower RSS after the backfill`, 'MiB', (r) => r.rssMiB, 'lower'),
      beside(`${kind}: follower peak RSS`, 'MiB', (r) => r.peakMiB, 'lower'),
      beside(`${kind}: follower RSS during the backfill, median of one sample a second`, 'MiB', (r) => r.rssDuringMedianMiB, 'lower'),
      beside(`${kind}: follower RSS during the backfill, 95th percentile`, 'MiB', (r) => r.rssDuringP95MiB, 'lower'),
    );
  }
  figures.push(figure('blocks fetched in the pass without processors', 'count', passes.map(() => setup.blocks - ADVANCE)));
  for (const kind of RPC_KINDS) {
    const baseline = rpcRounds.get(kind)!;
    if (withNode || baseline.length === 0) continue;
    figures.push(
      figure(`rpc history source: cold backfill of a ${kind} instance (replay JSON-RPC server, same chain)`, 'blocks/s', baseline.map((r) => r.blocksPerSecond), 'higher'),
      figure(`rpc history source, ${kind}: follower CPU per block (all threads)`, 'ms/block', baseline.map((r) => r.cpuMsPerBlock), 'lower'),
      figure(`rpc history source, ${kind}: JSON-RPC server CPU per block`, 'ms/block', baseline.map((r) => r.servingCpuMsPerBlock), 'lower'),
      figure(`rpc history source, ${kind}: follower peak RSS`, 'MiB', baseline.map((r) => r.peakMiB), 'lower'),
    );
  }
  return figures;
}
