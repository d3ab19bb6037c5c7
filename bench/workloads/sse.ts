/**
 * Workload `sse`: N concurrent change streams (`--connections`) opened by separate load processes
 * (bench/load/sse-client-pool.ts) against a real node whose devnet commits one change per 100 ms block,
 * then against a naive `node:http` fan-out over the same change log (bench/load/naive-sse-server.ts).
 * Reports streams established, disconnects, events/s delivered, the share of (stream, change) pairs
 * delivered, emittedAt → client latency p50/p99/max, and the cores the server and the load generator
 * kept busy (on a shared machine, read latency together with those) — each with the baseline's
 * figure of the same round beside it.
 *
 * `emittedAt` is stamped as the processor's commit starts, so the client's figure holds the commit.
 * The node's own metrics split the rest: the processor commit (emittedAt → commit done), commit done
 * → the listener handling its notice, commit done → a stream being handed its frame (sampled per
 * stream), and the fan-out pass, also per delivered event (load-independent enough to compare runs
 * on a shared machine, as are the CPU µs per delivered event of server and load generator).
 *
 * Content coding (`CDN_BENCH_SSE_ENCODING`): `both` (default) measures, in every round, the node's
 * streams twice — plain (no `Accept-Encoding`) and gzip (`Accept-Encoding: gzip`, inflated by the
 * client, each event timed once decoded) — and reports the gzip figures against the plain ones of the
 * same round, beside the plain-vs-naive ones; `identity` or `gzip` measures only that one against the
 * naive baseline (which serves plain frames). Every run reports the body bytes per stream per block.
 */
import { loadavg } from 'node:os';
import { startServerProcess } from '../load/server-process.js';
import { runSseClientPool, type SseClientsResult } from '../load/sse-client-pool.js';
import { startBenchNode, steadyDevnet, type BenchNode } from '../node.js';
import { compared, figure } from '../figures.js';
import { summarize } from '../stats.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

const RAMP_TIMEOUT_MS = 120_000;

/**
 * What the streams follow. `blobs` (default): one change per 100 ms devnet block. `erc20`
 * (`CDN_BENCH_SSE_PROCESSOR=erc20`, issue 13's shape): an erc20 instance over every token at one
 * block per second with `CDN_BENCH_SSE_TXS` transactions a block (default 50, over 256 accounts: ~100 balance changes a
 * block), so each stream gets a block's changes as one burst.
 */
interface Shape {
  readonly processor: string;
  readonly blockTimeMs: number;
  readonly sets: readonly string[];
  readonly toml: string | undefined;
}

function shapeFromEnv(): Shape {
  const processor = process.env.CDN_BENCH_SSE_PROCESSOR ?? 'blobs';
  if (processor === 'blobs') return { processor, blockTimeMs: 100, sets: steadyDevnet(100), toml: undefined };
  if (processor !== 'erc20') throw new Error(`CDN_BENCH_SSE_PROCESSOR: expected blobs or erc20, got ${JSON.stringify(processor)}`);
  const transactions = Number(process.env.CDN_BENCH_SSE_TXS ?? '50');
  if (!Number.isInteger(transactions) || transactions < 1) throw new Error(`CDN_BENCH_SSE_TXS: expected a positive integer, got ${JSON.stringify(process.env.CDN_BENCH_SSE_TXS)}`);
  return {
    processor, blockTimeMs: 1000,
    sets: ['devnet.block_time_ms=1000', 'devnet.reorg_every=0', `devnet.transactions_per_block=${transactions}`, 'devnet.blob_transactions_per_block=0', 'devnet.accounts=256'],
    toml: '[[processors]]\nid = "erc20"\nkind = "erc20"\ntokens = "*"\n',
  };
}

const SHAPE = shapeFromEnv();

type Encoding = 'identity' | 'gzip';

function encodingsFromEnv(): readonly Encoding[] {
  const value = process.env.CDN_BENCH_SSE_ENCODING ?? 'both';
  if (value === 'both') return ['identity', 'gzip'];
  if (value === 'identity' || value === 'gzip') return [value];
  throw new Error(`CDN_BENCH_SSE_ENCODING: expected identity, gzip or both, got ${JSON.stringify(value)}`);
}

const ENCODINGS = encodingsFromEnv();
const STREAM_PATH = `/v1/processors/${SHAPE.processor}/stream`;
const HEAD_PATH = `/v1/processors/${SHAPE.processor}/changes/head`;

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

function histogramTotals(text: string, name: string): HistogramTotals {
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

/** Mean of what was observed between two readings, in ms (NaN when nothing was). */
const meanMs = (before: HistogramTotals, after: HistogramTotals) => (1000 * (after.sum - before.sum)) / (after.count - before.count);

/**
 * The p-quantile (ms) of what was observed between two readings, interpolated linearly inside its
 * bucket (NaN when nothing was observed; the last finite bound when it lies in the +Inf bucket).
 */
function quantileMs(before: HistogramTotals, after: HistogramTotals, q: number): number {
  const count = after.count - before.count;
  if (count <= 0) return NaN;
  const earlier = new Map(before.buckets);
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [le, cumulative] of after.buckets) {
    const seen = cumulative - (earlier.get(le) ?? 0);
    if (seen >= q * count) {
      if (!Number.isFinite(le)) return lowerBound * 1000;
      const share = seen === lowerCount ? 1 : (q * count - lowerCount) / (seen - lowerCount);
      return (lowerBound + share * (le - lowerBound)) * 1000;
    }
    lowerBound = le;
    lowerCount = seen;
  }
  return lowerBound * 1000;
}

/** The processor's commit time; `emittedAt` is stamped as a commit starts, so it is part of the latency. */
const COMMIT = 'chain_node_processor_commit_seconds';
/** One listener fan-out pass: the new changes read once and written to every stream. */
const SWEEP = 'chain_node_sse_sweep_seconds';
/** Commit done → a stream handed its frame (sampled: every 16th stream of a pass and the last). */
const COMMIT_TO_WRITE = 'chain_node_sse_commit_to_write_seconds';
/** Commit done → the listener handling the processor's change notice. */
const NOTICE = 'chain_node_sse_notice_delay_seconds';
const HISTOGRAMS = [COMMIT, SWEEP, COMMIT_TO_WRITE, NOTICE] as const;
type Readings = Record<(typeof HISTOGRAMS)[number], HistogramTotals> & { events: number };

async function readings(node: BenchNode): Promise<Readings> {
  const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
  const entries = HISTOGRAMS.map((name) => [name, histogramTotals(text, name)] as const);
  return { ...(Object.fromEntries(entries) as Record<(typeof HISTOGRAMS)[number], HistogramTotals>), events: counterTotal(text, 'chain_node_sse_events_total') };
}

function counterTotal(text: string, name: string): number {
  let sum = 0;
  for (const match of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(match[1]);
  return sum;
}

async function streamClients(target: Target, options: WorkloadOptions, encoding: Encoding): Promise<SseClientsResult> {
  const run = await runSseClientPool({
    url: target.baseUrl + STREAM_PATH,
    headUrl: target.resumesFromHead ? target.baseUrl + HEAD_PATH : null,
    serverPid: target.pid,
    streams: options.connections ?? 50,
    durationSeconds: options.durationSeconds,
    rampTimeoutMs: RAMP_TIMEOUT_MS,
    encoding,
  });
  if (encoding === 'gzip' && run.gzipStreams !== run.established) throw new Error(`${target.who}: only ${run.gzipStreams} of ${run.established} streams asking for gzip were gzip-coded`);
  if (run.events === 0) {
    const message = `${target.who}: no change reached any of ${run.established}/${run.requested} streams in ${run.windowSeconds.toFixed(1)} s`;
    throw target.who === BASELINE_WHO ? new BaselineDeliveredNothing(message) : new Error(message);
  }
  return run;
}

const BASELINE_WHO = 'naive baseline';

/**
 * The naive fan-out reached no stream in a round (at 10,000 streams it often cannot write one change to them all
 * within the window): that is the baseline's result, not a failure of the node's measurement, which is kept.
 */
class BaselineDeliveredNothing extends Error {}

const changesInWindow = (run: SseClientsResult) => (run.sequences ? run.sequences.last - run.sequences.first + 1 : 0);
const eventsPerSecond = (run: SseClientsResult) => run.events / run.windowSeconds;
/** CPU µs per delivered stream event: `cores` kept busy over the window's events. */
const microsPerEvent = (cores: number, run: SseClientsResult) => (1e6 * cores) / eventsPerSecond(run);
/** Response body bytes (as on the wire: compressed, chunk framing included) per stream per devnet block. */
const bytesPerStreamPerBlock = (run: SseClientsResult) => run.bodyBytes / run.established / ((run.windowSeconds * 1000) / SHAPE.blockTimeMs);

/** What every stream figure is compared against, in the same run. */
const BASELINE = 'naive node:http fan-out';
/** What the gzip streams are compared against when both codings run. */
const PLAIN_NODE = 'node, plain streams (same round)';

/** The node's figures, each beside the baseline's of the same rounds (null: the baseline has none to give, see BaselineDeliveredNothing). */
function figuresOf(nodeRuns: readonly SseClientsResult[], baselineRuns: readonly SseClientsResult[] | null, baseline = BASELINE, prefix = ''): Figure[] {
  const of = (name: string, unit: string, value: (run: SseClientsResult) => number, better?: Figure['better']): Figure => (baselineRuns === null
    ? figure(prefix + name, unit, nodeRuns.map(value), better)
    : compared(prefix + name, unit, nodeRuns.map(value), { name: baseline, values: baselineRuns.map(value) }, better));
  return [
    of('streams gzip-coded', 'streams', (run) => run.gzipStreams),
    of('response body bytes per stream per block (on the wire)', 'bytes', bytesPerStreamPerBlock, 'lower'),
    of('streams established', 'streams', (run) => run.established),
    of('time to open the streams', 's', (run) => run.rampSeconds, 'lower'),
    of('disconnects', 'streams', (run) => run.disconnects, 'lower'),
    of('events delivered', 'events/s', eventsPerSecond, 'higher'),
    of('(stream, change) pairs delivered', 'ratio', (run) => run.events / (run.established * changesInWindow(run)), 'higher'),
    of('emittedAt (commit start) → client p50', 'ms', (run) => run.latencyMs.p50, 'lower'),
    of('emittedAt (commit start) → client p99', 'ms', (run) => run.latencyMs.p99, 'lower'),
    of('emittedAt (commit start) → client max', 'ms', (run) => run.latencyMs.max, 'lower'),
    of('server CPU', 'cores', (run) => run.serverCpuCores),
    of('server CPU per delivered event (whole node process)', 'µs/event', (run) => microsPerEvent(run.serverCpuCores, run), 'lower'),
    of('load generator is the native epoll client (1) or node:http (0)', 'flag', (run) => (run.client === 'native' ? 1 : 0)),
    of('load generator processes', 'processes', (run) => run.processes),
    of('load generator CPU', 'cores', (run) => run.clientCpuCores),
    of('load generator CPU per delivered event', 'µs/event', (run) => microsPerEvent(run.clientCpuCores, run), 'lower'),
    of('load generator event-loop delay p99', 'ms', (run) => run.clientLoopDelayP99Ms),
  ];
}

/** The node's own timings over one round's window (from two /metrics readings); NaN where nothing was observed. */
interface NodeTimings {
  readonly commitMeanMs: number;
  readonly commitP99Ms: number;
  readonly noticeP50Ms: number;
  readonly noticeP99Ms: number;
  readonly writeP50Ms: number;
  readonly writeP99Ms: number;
  readonly sweepMeanMs: number;
  readonly sweepP99Ms: number;
  readonly sweepMicrosPerEvent: number;
}

function timingsBetween(before: Readings, after: Readings): NodeTimings {
  return {
    commitMeanMs: meanMs(before[COMMIT], after[COMMIT]),
    commitP99Ms: quantileMs(before[COMMIT], after[COMMIT], 0.99),
    noticeP50Ms: quantileMs(before[NOTICE], after[NOTICE], 0.5),
    noticeP99Ms: quantileMs(before[NOTICE], after[NOTICE], 0.99),
    writeP50Ms: quantileMs(before[COMMIT_TO_WRITE], after[COMMIT_TO_WRITE], 0.5),
    writeP99Ms: quantileMs(before[COMMIT_TO_WRITE], after[COMMIT_TO_WRITE], 0.99),
    sweepMeanMs: meanMs(before[SWEEP], after[SWEEP]),
    sweepP99Ms: quantileMs(before[SWEEP], after[SWEEP], 0.99),
    sweepMicrosPerEvent: (1e6 * (after[SWEEP].sum - before[SWEEP].sum)) / (after.events - before.events),
  };
}

const TIMING_FIGURES: ReadonlyArray<readonly [string, keyof NodeTimings, string]> = [
  ['processor commit (emittedAt → commit done), mean', 'commitMeanMs', 'ms'],
  ['processor commit, p99 (interpolated in buckets)', 'commitP99Ms', 'ms'],
  ['commit done → listener handles the notice, p50', 'noticeP50Ms', 'ms'],
  ['commit done → listener handles the notice, p99', 'noticeP99Ms', 'ms'],
  ['commit done → stream handed its frame (listener, sampled streams), p50', 'writeP50Ms', 'ms'],
  ['commit done → stream handed its frame (listener, sampled streams), p99', 'writeP99Ms', 'ms'],
  ['listener fan-out pass (read once, write to every stream), mean', 'sweepMeanMs', 'ms'],
  ['listener fan-out pass, p99 (interpolated in buckets)', 'sweepP99Ms', 'ms'],
  ['listener fan-out pass time per delivered event', 'sweepMicrosPerEvent', 'µs/event'],
];

/** One figure per timing that every round observed (a one-second smoke round may see no commit). */
function timingFigures(rounds: readonly NodeTimings[], prefix = ''): Figure[] {
  return TIMING_FIGURES.flatMap(([name, key, unit]) => {
    const values = rounds.map((round) => round[key]);
    return values.every(Number.isFinite) ? [{ name: prefix + name, unit, ...summarize(values), better: 'lower' as const }] : [];
  });
}

/** Figure names of the gzip streams when plain ones are measured too. */
const GZIP_PREFIX = 'gzip streams: ';

export const sseWorkload: Workload = {
  name: 'sse',
  description: 'N concurrent SSE change streams (--connections): emittedAt → client latency, events/s, vs a naive node:http fan-out',
  async run(options) {
    const loadAtStart = loadavg()[0]!;
    const node = await startBenchNode(SHAPE.sets, SHAPE.toml === undefined ? {} : { toml: SHAPE.toml });
    try {
      await node.waitFor('a first change', async () => (await headCursor(node)) !== null, 60_000);
      const baseline = await startServerProcess('naive-sse-server', ['--data-dir', node.dataDir, '--instance', SHAPE.processor]);
      try {
        const nodeTarget: Target = { who: 'node', baseUrl: node.baseUrl, pid: node.pid, resumesFromHead: true };
        const baselineTarget: Target = { who: BASELINE_WHO, baseUrl: baseline.baseUrl, pid: baseline.pid, resumesFromHead: false };
        const nodeRuns = new Map<Encoding, SseClientsResult[]>(ENCODINGS.map((encoding) => [encoding, []]));
        const timings = new Map<Encoding, NodeTimings[]>(ENCODINGS.map((encoding) => [encoding, []]));
        const baselineRuns: SseClientsResult[] = [];
        let baselineFailed = 0;
        for (let round = 0; round < options.rounds; round += 1) {
          for (const encoding of ENCODINGS) {
            const before = await readings(node);
            nodeRuns.get(encoding)!.push(await streamClients(nodeTarget, options, encoding));
            timings.get(encoding)!.push(timingsBetween(before, await readings(node)));
          }
          try {
            baselineRuns.push(await streamClients(baselineTarget, options, 'identity'));
          } catch (error) {
            if (!(error instanceof BaselineDeliveredNothing)) throw error;
            process.stderr.write(`sse: ${error.message}; the node's figures of this round are kept, without a baseline\n`);
            baselineFailed += 1;
          }
        }
        const first = nodeRuns.get(ENCODINGS[0]!)!;
        const both = ENCODINGS.length === 2;
        return [
          { name: 'machine load average (1 min) at start', unit: 'load', min: loadAtStart, median: loadAtStart, max: loadAtStart },
          { name: `change rate (${SHAPE.processor}, one devnet block per ${SHAPE.blockTimeMs} ms)`, unit: 'changes/s', ...summarize(first.map((run) => changesInWindow(run) / run.windowSeconds)) },
          { name: 'naive baseline rounds that reached no stream', unit: 'rounds', min: baselineFailed, median: baselineFailed, max: baselineFailed },
          ...figuresOf(first, baselineFailed > 0 ? null : baselineRuns, BASELINE, both || ENCODINGS[0] === 'identity' ? '' : GZIP_PREFIX),
          ...timingFigures(timings.get(ENCODINGS[0]!)!, both || ENCODINGS[0] === 'identity' ? '' : GZIP_PREFIX),
          ...(both ? [...figuresOf(nodeRuns.get('gzip')!, first, PLAIN_NODE, GZIP_PREFIX), ...timingFigures(timings.get('gzip')!, GZIP_PREFIX)] : []),
          { name: 'load average (1 min) at the end', unit: 'load', min: loadavg()[0]!, median: loadavg()[0]!, max: loadavg()[0]! },
        ];
      } finally {
        await baseline.stop();
      }
    } finally {
      await node.stop();
    }
  },
};
