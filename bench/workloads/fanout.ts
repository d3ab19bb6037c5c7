/**
 * Workload `fanout` (issue 30's Measure): SSE streams following the erc20 instance (one devnet block a second,
 * ~100 balance changes a block) served two ways in the same run, at each stream count of
 * `CDN_BENCH_FANOUT_STREAMS` (default `1000,5000,10000`):
 *
 * - **node**: every stream on the node itself (the `sse` workload's path);
 * - **relays**: the node publishes to a real nats-server (`[delivery.jetstream]`) and two `chain-node relay`
 *   processes serve half of the streams each.
 *
 * Figures, each relay figure beside the node's of the same stream count: the node's CPU per block (its whole
 * process, over the measuring window: with relays it should no longer grow with the streams), emittedAt (commit
 * start) → client p50/p99, the relays' CPU per delivered event against the node's own SSE path, and, from each
 * relay's metrics, commit → the relay holding the change (publication, JetStream and the relay's read).
 * `--duration` is the measuring window per point; `--rounds` repeats the whole series, after one warm-up pass at the
 * first stream count (both ways, not recorded).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds } from '../load/process-cpu.js';
import { startNatsProcess, waitHttp } from '../load/nats-process.js';
import { runSseClientPool, type SseClientsResult } from '../load/sse-client-pool.js';
import { spawnNodeScript, stopProcess, tailOutput } from '../load/spawn.js';
import { freePort, startBenchNode, type BenchNode } from '../node.js';
import { compared, figure } from '../figures.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

const CLI = fileURLToPath(new URL('../../cli.js', import.meta.url));
const PROCESSOR = 'erc20';
const RAMP_TIMEOUT_MS = 180_000;
/** One block a second; a smoke run (a one-second window) makes five. */
const blockMs = (options: WorkloadOptions) => (options.smoke ? 200 : 1000);
const setsFor = (options: WorkloadOptions) => [`devnet.block_time_ms=${blockMs(options)}`, 'devnet.reorg_every=0', 'devnet.transactions_per_block=50', 'devnet.blob_transactions_per_block=0', 'devnet.accounts=256'];

function streamCounts(): number[] {
  const text = process.env.CDN_BENCH_FANOUT_STREAMS ?? '1000,5000,10000';
  const counts = text.split(',').map((part) => Number(part.trim()));
  if (counts.some((n) => !Number.isInteger(n) || n < 2)) throw new Error(`CDN_BENCH_FANOUT_STREAMS: expected comma-separated stream counts of at least 2, got ${JSON.stringify(text)}`);
  return counts;
}

interface Spawned {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  stop(): Promise<void>;
}

async function startRelay(dir: string, natsUrl: string): Promise<Spawned> {
  const port = await freePort();
  const config = join(dir, `relay-${port}.toml`);
  writeFileSync(config, `[listeners]\napi = "127.0.0.1:${port}"\n[log]\nlevel = "warn"\n[delivery.jetstream]\nservers = ["${natsUrl}"]\n`);
  const child = spawnNodeScript(CLI, ['relay', '--config', config]);
  const output = tailOutput(child);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitHttp(`${baseUrl}/health/ready`, child, () => output.join('\n'), 120_000);
  return { child, baseUrl, stop: () => stopProcess(child, 5000) };
}

/** CPU seconds of `pid`, sampled every 200 ms, so a window's CPU can be cut out afterwards. */
function cpuSampler(pid: number): { stop(): void; coresBetween(fromMs: number, toMs: number): number } {
  const samples: Array<{ at: number; cpu: number }> = [{ at: Date.now(), cpu: cpuSeconds(pid) }];
  const timer = setInterval(() => samples.push({ at: Date.now(), cpu: cpuSeconds(pid) }), 200);
  const at = (ms: number) => samples.reduce((best, s) => (Math.abs(s.at - ms) < Math.abs(best.at - ms) ? s : best));
  return {
    stop: () => clearInterval(timer),
    coresBetween: (fromMs, toMs) => {
      const [a, b] = [at(fromMs), at(toMs)];
      return (b.cpu - a.cpu) / ((b.at - a.at) / 1000);
    },
  };
}

/**
 * The node's head block number, sampled every 500 ms, so the blocks a window saw are counted rather than assumed: on
 * two busy cores the devnet may make fewer than one a second, and CPU over an assumed count would then read low.
 */
function blockSampler(rpcUrl: string): { stop(): void; blocksBetween(fromMs: number, toMs: number): number } {
  const samples: Array<{ at: number; block: number }> = [];
  const sample = async () => {
    try {
      const response = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' });
      samples.push({ at: Date.now(), block: Number(((await response.json()) as { result: string }).result) });
    } catch {
      // a missed sample: the neighbours stand in
    }
  };
  void sample();
  const timer = setInterval(() => void sample(), 500);
  const at = (ms: number) => samples.reduce((best, s) => (Math.abs(s.at - ms) < Math.abs(best.at - ms) ? s : best));
  return {
    stop: () => clearInterval(timer),
    blocksBetween: (fromMs, toMs) => {
      const [a, b] = [at(fromMs), at(toMs)];
      return ((b.block - a.block) * (toMs - fromMs)) / Math.max(1, b.at - a.at);
    },
  };
}

async function histogramQuantileMs(url: string, name: string, q: number): Promise<number> {
  const text = await (await fetch(url)).text();
  const buckets: Array<[number, number]> = [];
  for (const match of text.matchAll(new RegExp(`^${name}_bucket\\{[^}]*le="([^"]+)"[^}]*\\} (\\S+)$`, 'gm'))) buckets.push([match[1] === '+Inf' ? Infinity : Number(match[1]), Number(match[2])]);
  buckets.sort((a, b) => a[0] - b[0]);
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return NaN;
  let lower = 0;
  let below = 0;
  for (const [le, cumulative] of buckets) {
    if (cumulative >= q * total) return Number.isFinite(le) ? (lower + ((q * total - below) / Math.max(1, cumulative - below)) * (le - lower)) * 1000 : lower * 1000;
    lower = le;
    below = cumulative;
  }
  return lower * 1000;
}

interface Point {
  /** Cores the node process kept busy over the window, and the window's delivered events. */
  readonly nodeCores: number;
  readonly events: number;
  readonly windowSeconds: number;
  /** The node's CPU over the window divided by the blocks it made in the window (counted, not assumed). */
  readonly nodeCpuPerBlockMs: number;
  readonly blocksPerSecond: number;
  readonly latencyP50: number;
  readonly latencyP99: number;
  readonly established: number;
  readonly deliveredShare: number;
  /** The serving processes' CPU per delivered event (the node's own for `node`, the relays' for `relays`). */
  readonly serverMicrosPerEvent: number;
  readonly commitToRelayP50?: number;
  readonly commitToRelayP99?: number;
}

function pointOf(runs: readonly SseClientsResult[], nodeCores: number, serverCores: number, blocks: number): Point {
  const events = runs.reduce((sum, run) => sum + run.events, 0);
  const window = Math.max(...runs.map((run) => run.windowSeconds));
  const changes = Math.max(...runs.map((run) => (run.sequences ? run.sequences.last - run.sequences.first + 1 : 0)));
  const established = runs.reduce((sum, run) => sum + run.established, 0);
  return {
    nodeCores, events, windowSeconds: window,
    nodeCpuPerBlockMs: (1000 * nodeCores * window) / blocks,
    blocksPerSecond: blocks / window,
    // Percentiles of the two relays' pools: the worse one of each (a lower bound on the merged p99 is not wanted).
    latencyP50: Math.max(...runs.map((run) => run.latencyMs.p50)),
    latencyP99: Math.max(...runs.map((run) => run.latencyMs.p99)),
    established,
    deliveredShare: events / (established * changes),
    serverMicrosPerEvent: (1e6 * serverCores * window) / events,
  };
}

async function measure(options: WorkloadOptions, targets: ReadonlyArray<{ url: string; pid: number }>, streams: number): Promise<SseClientsResult[]> {
  return Promise.all(targets.map((target, i) => runSseClientPool({
    url: `${target.url}/v1/processors/${PROCESSOR}/stream`, headUrl: `${target.url}/v1/processors/${PROCESSOR}/changes/head`, serverPid: target.pid,
    streams: Math.floor(streams / targets.length) + (i < streams % targets.length ? 1 : 0), durationSeconds: options.durationSeconds, rampTimeoutMs: RAMP_TIMEOUT_MS, encoding: 'identity',
  })));
}

export const fanoutWorkload: Workload = {
  name: 'fanout',
  description: 'SSE streams of the erc20 instance served by the node itself vs by two relays over NATS JetStream: node CPU per block, latency, relay CPU per event',
  async run(options) {
    const dir = mkdtempSync(join(tmpdir(), 'cdn-bench-fanout-'));
    const nats = await startNatsProcess(dir);
    let node: BenchNode | null = null;
    const relays: Spawned[] = [];
    try {
      node = await startBenchNode(setsFor(options), { toml: `[delivery.jetstream]\nenabled = true\nservers = ["${nats.url}"]\n[[processors]]\nid = "erc20"\nkind = "erc20"\ntokens = "*"\n` });
      const started = node;
      await started.waitFor('a first change', async () => (await fetch(`${started.baseUrl}/v1/processors/${PROCESSOR}/changes/head`)).status === 200, 60_000);
      relays.push(await startRelay(dir, nats.url), await startRelay(dir, nats.url));
      const figures: Figure[] = [];
      const counts = options.smoke ? [10] : streamCounts();
      const byCount = new Map<number, { node: Point[]; relays: Point[] }>(counts.map((n) => [n, { node: [], relays: [] }]));
      const sampler = cpuSampler(started.pid);
      const blockCount = blockSampler(started.rpcUrl);
      const relaySamplers = relays.map((relay) => cpuSampler(relay.child.pid!));
      try {
        // A warm-up pass, not recorded: the first point of a series otherwise carries the node's start (JIT, the
        // publisher's first catch-up, the store's first growth) and read ~14 % above the next one (2026-11-28).
        if (!options.smoke) {
          for (const mode of ['node', 'relays'] as const) {
            const targets = mode === 'node' ? [{ url: started.baseUrl, pid: started.pid }] : relays.map((relay) => ({ url: relay.baseUrl, pid: relay.child.pid! }));
            await measure(options, targets, counts[0]!);
            process.stderr.write(`fanout: warm-up with ${counts[0]} streams via ${mode} done (not recorded)\n`);
          }
        }
        for (let round = 0; round < options.rounds; round += 1) {
          for (const streams of counts) {
            for (const mode of ['node', 'relays'] as const) {
              const targets = mode === 'node' ? [{ url: started.baseUrl, pid: started.pid }] : relays.map((relay) => ({ url: relay.baseUrl, pid: relay.child.pid! }));
              const runs = await measure(options, targets, streams);
              const end = Date.now();
              const start = end - Math.max(...runs.map((run) => run.windowSeconds)) * 1000;
              const nodeCores = sampler.coresBetween(start, end);
              const serverCores = mode === 'node' ? nodeCores : relaySamplers.reduce((sum, s) => sum + s.coresBetween(start, end), 0);
              const point = pointOf(runs, nodeCores, serverCores, blockCount.blocksBetween(start, end));
              if (mode === 'relays') {
                const p50 = await Promise.all(relays.map((relay) => histogramQuantileMs(`${relay.baseUrl}/metrics`, 'chain_node_relay_commit_to_copy_seconds', 0.5)));
                const p99 = await Promise.all(relays.map((relay) => histogramQuantileMs(`${relay.baseUrl}/metrics`, 'chain_node_relay_commit_to_copy_seconds', 0.99)));
                byCount.get(streams)!.relays.push({ ...point, commitToRelayP50: Math.max(...p50), commitToRelayP99: Math.max(...p99) });
              } else {
                byCount.get(streams)!.node.push(point);
              }
              process.stderr.write(`fanout: ${streams} streams via ${mode}: node ${point.nodeCpuPerBlockMs.toFixed(1)} ms CPU/block (${point.blocksPerSecond.toFixed(2)} blocks/s), p99 ${point.latencyP99.toFixed(1)} ms, ${point.established} streams, ${point.serverMicrosPerEvent.toFixed(2)} µs/event\n`);
            }
          }
        }
      } finally {
        sampler.stop();
        blockCount.stop();
        for (const s of relaySamplers) s.stop();
      }
      const NODE = 'node serving every stream itself (same run)';
      for (const [streams, points] of byCount) {
        const of = (name: string, unit: string, value: (p: Point) => number, better: Figure['better']) => compared(`${streams} streams: ${name}`, unit, points.relays.map(value), { name: NODE, values: points.node.map(value) }, better);
        figures.push(
          of('node CPU per block (whole process; blocks counted in the window)', 'ms', (p) => p.nodeCpuPerBlockMs, 'lower'),
          of('blocks the devnet made per second in the window', 'blocks/s', (p) => p.blocksPerSecond, 'higher'),
          of('emittedAt (commit start) → client p50', 'ms', (p) => p.latencyP50, 'lower'),
          of('emittedAt (commit start) → client p99', 'ms', (p) => p.latencyP99, 'lower'),
          of('streams established', 'streams', (p) => p.established, 'higher'),
          of('(stream, change) pairs delivered', 'ratio', (p) => p.deliveredShare, 'higher'),
          // The node's own SSE path: what serving the streams added to the node's CPU (the same round without streams on
          // it, the relay run, is the reference), per event it delivered.
          compared(`${streams} streams: serving CPU per delivered event (the relays' processes summed)`, 'µs/event', points.relays.map((p) => p.serverMicrosPerEvent),
            { name: "the node's SSE path: its CPU with the streams less its CPU with them on the relays, same round", values: points.node.map((p, i) => (1e6 * (p.nodeCores - (points.relays[i]?.nodeCores ?? NaN)) * p.windowSeconds) / p.events) }, 'lower'),
          figure(`${streams} streams: commit done → relay holds the change p50 (relay metric, since relay start)`, 'ms', points.relays.map((p) => p.commitToRelayP50 ?? NaN), 'lower'),
          figure(`${streams} streams: commit done → relay holds the change p99 (relay metric, since relay start)`, 'ms', points.relays.map((p) => p.commitToRelayP99 ?? NaN), 'lower'),
        );
      }
      // A figure nothing was observed for (e.g. commit → relay in a one-second smoke window) is left out, not reported as NaN.
      return figures.filter((f) => [f.min, f.median, f.max].every(Number.isFinite));
    } finally {
      await Promise.all(relays.map((relay) => relay.stop()));
      await node?.stop();
      await nats.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
