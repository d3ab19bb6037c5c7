/**
 * Workload `sse`: N concurrent change streams (`--connections`) opened by separate load processes
 * (bench/load/sse-client-pool.ts) against a real node whose devnet commits one change per 100 ms block,
 * then against a naive `node:http` fan-out over the same change log (bench/load/naive-sse-server.ts).
 * Reports streams established, disconnects, events/s delivered, the share of (stream, change) pairs
 * delivered, commit → client latency p50/p99/max, and the cores the server and the load generator
 * kept busy (on a shared machine, read latency together with those) — each with the baseline's
 * figure of the same round beside it.
 */
import { loadavg } from 'node:os';
import { startServerProcess } from '../load/server-process.js';
import { runSseClientPool, type SseClientsResult } from '../load/sse-client-pool.js';
import { startBenchNode, steadyDevnet, type BenchNode } from '../node.js';
import { compared } from '../figures.js';
import { summarize } from '../stats.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

const BLOCK_TIME_MS = 100;
const RAMP_TIMEOUT_MS = 120_000;
const STREAM_PATH = '/v1/processors/blobs/stream';
const HEAD_PATH = '/v1/processors/blobs/changes/head';

interface Target {
  readonly who: string;
  readonly baseUrl: string;
  readonly pid: number;
  /** The node resumes each wave of streams after the current head; the baseline starts at its head anyway. */
  readonly resumesFromHead: boolean;
}

async function headCursor(node: BenchNode): Promise<string | null> {
  const response = await fetch(node.baseUrl + HEAD_PATH);
  if (response.status !== 200) return null;
  return ((await response.json()) as { cursor: string | null }).cursor;
}

/** A histogram's totals so far, summed over its label sets (one per listener instance, for instance). */
interface HistogramTotals {
  readonly sum: number;
  readonly count: number;
  /** Cumulative count per upper bound (`le`), ascending. */
  readonly buckets: ReadonlyArray<readonly [number, number]>;
}

async function histogramTotals(node: BenchNode, name: string): Promise<HistogramTotals> {
  const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
  const total = (suffix: string) => {
    let sum = 0;
    for (const match of text.matchAll(new RegExp(`^${name}_${suffix}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(match[1]);
    return sum;
  };
  const buckets = new Map<number, number>();
  for (const match of text.matchAll(new RegExp(`^${name}_bucket\\{[^}]*le="([^"]+)"[^}]*\\} (\\S+)$`, 'gm'))) {
    const le = match[1] === '+Inf' ? Infinity : Number(match[1]);
    buckets.set(le, (buckets.get(le) ?? 0) + Number(match[2]));
  }
  return { sum: total('sum'), count: total('count'), buckets: [...buckets].sort((a, b) => a[0] - b[0]) };
}

/** Mean of what was observed between two readings, in ms. */
const meanMs = (before: HistogramTotals, after: HistogramTotals) => (1000 * (after.sum - before.sum)) / (after.count - before.count);

/** The upper bound (ms) of the bucket holding the p-quantile of what was observed between two readings. */
function quantileBoundMs(before: HistogramTotals, after: HistogramTotals, q: number): number {
  const count = after.count - before.count;
  const earlier = new Map(before.buckets);
  for (const [le, cumulative] of after.buckets) {
    if (cumulative - (earlier.get(le) ?? 0) >= q * count) return le * 1000;
  }
  return Infinity;
}

/** The processor's commit time; `emittedAt` is stamped as a commit starts, so it is part of the latency. */
const COMMIT = 'chain_node_processor_commit_seconds';
/** One listener fan-out pass: the new changes read once and written to every stream. */
const SWEEP = 'chain_node_sse_sweep_seconds';

async function streamClients(target: Target, options: WorkloadOptions): Promise<SseClientsResult> {
  const run = await runSseClientPool({
    url: target.baseUrl + STREAM_PATH,
    headUrl: target.resumesFromHead ? target.baseUrl + HEAD_PATH : null,
    serverPid: target.pid,
    streams: options.connections ?? 50,
    durationSeconds: options.durationSeconds,
    rampTimeoutMs: RAMP_TIMEOUT_MS,
  });
  if (run.events === 0) throw new Error(`${target.who}: no change reached any of ${run.established}/${run.requested} streams in ${run.windowSeconds.toFixed(1)} s`);
  return run;
}

const changesInWindow = (run: SseClientsResult) => (run.sequences ? run.sequences.last - run.sequences.first + 1 : 0);
const eventsPerSecond = (run: SseClientsResult) => run.events / run.windowSeconds;

/** What every stream figure is compared against, in the same run. */
const BASELINE = 'naive node:http fan-out';

function figuresOf(nodeRuns: readonly SseClientsResult[], baselineRuns: readonly SseClientsResult[]): Figure[] {
  const of = (name: string, unit: string, value: (run: SseClientsResult) => number, better?: Figure['better']): Figure =>
    compared(name, unit, nodeRuns.map(value), { name: BASELINE, values: baselineRuns.map(value) }, better);
  return [
    of('streams established', 'streams', (run) => run.established),
    of('time to open the streams', 's', (run) => run.rampSeconds, 'lower'),
    of('disconnects', 'streams', (run) => run.disconnects, 'lower'),
    of('events delivered', 'events/s', eventsPerSecond, 'higher'),
    of('(stream, change) pairs delivered', 'ratio', (run) => run.events / (run.established * changesInWindow(run)), 'higher'),
    of('commit → client p50', 'ms', (run) => run.latencyMs.p50, 'lower'),
    of('commit → client p99', 'ms', (run) => run.latencyMs.p99, 'lower'),
    of('commit → client max', 'ms', (run) => run.latencyMs.max, 'lower'),
    of('server CPU', 'cores', (run) => run.serverCpuCores),
    of('load generator processes', 'processes', (run) => run.processes),
    of('load generator CPU', 'cores', (run) => run.clientCpuCores),
    of('load generator event-loop delay p99', 'ms', (run) => run.clientLoopDelayP99Ms),
  ];
}

export const sseWorkload: Workload = {
  name: 'sse',
  description: 'N concurrent SSE change streams (--connections): commit → client latency, events/s, vs a naive node:http fan-out',
  async run(options) {
    const loadAtStart = loadavg()[0]!;
    const node = await startBenchNode(steadyDevnet(BLOCK_TIME_MS));
    try {
      await node.waitFor('a first change', async () => (await headCursor(node)) !== null, 60_000);
      const baseline = await startServerProcess('naive-sse-server', ['--data-dir', node.dataDir]);
      try {
        const nodeTarget: Target = { who: 'node', baseUrl: node.baseUrl, pid: node.pid, resumesFromHead: true };
        const baselineTarget: Target = { who: 'naive baseline', baseUrl: baseline.baseUrl, pid: baseline.pid, resumesFromHead: false };
        const nodeRuns: SseClientsResult[] = [];
        const baselineRuns: SseClientsResult[] = [];
        const commitMs: number[] = [];
        const sweepMeanMs: number[] = [];
        const sweepP99Ms: number[] = [];
        for (let round = 0; round < options.rounds; round += 1) {
          const before = { commit: await histogramTotals(node, COMMIT), sweep: await histogramTotals(node, SWEEP) };
          nodeRuns.push(await streamClients(nodeTarget, options));
          const after = { commit: await histogramTotals(node, COMMIT), sweep: await histogramTotals(node, SWEEP) };
          commitMs.push(meanMs(before.commit, after.commit));
          sweepMeanMs.push(meanMs(before.sweep, after.sweep));
          sweepP99Ms.push(quantileBoundMs(before.sweep, after.sweep, 0.99));
          baselineRuns.push(await streamClients(baselineTarget, options));
        }
        return [
          { name: 'machine load average (1 min) at start', unit: 'load', min: loadAtStart, median: loadAtStart, max: loadAtStart },
          { name: 'change rate (one change per devnet block)', unit: 'changes/s', ...summarize(nodeRuns.map((run) => changesInWindow(run) / run.windowSeconds)) },
          ...figuresOf(nodeRuns, baselineRuns),
          { name: 'processor commit (part of the latency), mean', unit: 'ms', ...summarize(commitMs) },
          { name: 'listener fan-out pass (read once, write to every stream), mean', unit: 'ms', ...summarize(sweepMeanMs) },
          { name: 'listener fan-out pass, p99 (bucket upper bound)', unit: 'ms', ...summarize(sweepP99Ms) },
        ];
      } finally {
        await baseline.stop();
      }
    } finally {
      await node.stop();
    }
  },
};
