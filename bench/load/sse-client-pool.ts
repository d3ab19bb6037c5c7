/**
 * The SSE load generator as a pool of sse-clients processes, so one process's loop does not cap what
 * a many-core machine can measure. Each is the native epoll client (bench/load/sse-clients.c, one per
 * 5,000 streams) when a C compiler is at hand, else the node:http client (bench/load/sse-clients.ts,
 * one per 2,500 streams); at most one process per core either way. Each opens its share of the
 * streams and reports ready; then all measure the same window together, and their reports merge
 * into one result (latency percentiles over every event of every process).
 */
import { availableParallelism } from 'node:os';
import type { ChildProcess } from 'node:child_process';
import { LatencyHistogram } from './latency-histogram.js';
import type { SseClientsReport } from './sse-clients.js';
import { nativeSseClient, spawnNative } from './sse-native.js';
import { loadScript, spawnNodeScript, stopProcess } from './spawn.js';

/** Streams one client process carries: the native client reads about ten times cheaper per event. */
const STREAMS_PER_PROCESS = { native: 5000, node: 2500 } as const;

export interface SsePoolOptions {
  readonly url: string;
  /** The node's change-head route, so each wave of streams resumes live (none for the baseline). */
  readonly headUrl: string | null;
  readonly serverPid: number;
  readonly streams: number;
  readonly durationSeconds: number;
  readonly rampTimeoutMs: number;
  /** What the streams ask for: `gzip` sends `Accept-Encoding: gzip` (and inflates what comes back). */
  readonly encoding: 'identity' | 'gzip';
}

export interface SseClientsResult {
  /** Which client ran: the native epoll one, or node:http where it could not be built. */
  readonly client: 'native' | 'node';
  readonly processes: number;
  readonly requested: number;
  readonly established: number;
  readonly disconnects: number;
  /** The slowest process's time to open its streams. */
  readonly rampSeconds: number;
  readonly windowSeconds: number;
  readonly events: number;
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly sequences: { readonly first: number; readonly last: number } | null;
  readonly serverCpuCores: number;
  /** Summed over the pool's processes. */
  readonly clientCpuCores: number;
  /** The worst process's. */
  readonly clientLoopDelayP99Ms: number;
  /** Streams the server answered with `Content-Encoding: gzip`. */
  readonly gzipStreams: number;
  /** Response body bytes on the wire in the window, all streams. */
  readonly bodyBytes: number;
}

interface PoolMember {
  readonly child: ChildProcess;
  /** The next JSON line the process prints: first its ready line, then its report. */
  readonly nextLine: () => Promise<unknown>;
}

/** Hands out a process's JSON stdout lines in order; rejects once its output has closed with none left. */
function jsonLineReader(child: ChildProcess, name: string): () => Promise<unknown> {
  const lines: unknown[] = [];
  const waiting: Array<{ resolve: (line: unknown) => void; reject: (error: Error) => void }> = [];
  let pending = '';
  let stderr = '';
  let closed: Error | null = null;
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
  child.stdout!.on('data', (chunk: Buffer) => {
    const parts = (pending + chunk.toString('utf8')).split('\n');
    pending = parts.pop() ?? '';
    for (const part of parts.filter(Boolean)) lines.push(JSON.parse(part));
    while (lines.length > 0 && waiting.length > 0) waiting.shift()!.resolve(lines.shift());
  });
  child.once('close', (code, signal) => {
    closed = new Error(`${name} ended with ${code ?? signal}: ${stderr.trim().slice(-2000)}`);
    for (const next of waiting.splice(0)) next.reject(closed);
  });
  return () => new Promise((resolve, reject) => {
    if (lines.length > 0) resolve(lines.shift());
    else if (closed) reject(closed);
    else waiting.push({ resolve, reject });
  });
}

function startMember(options: SsePoolOptions, streams: number, native: string | null): PoolMember {
  const args = [
    '--url', options.url, ...(options.headUrl ? ['--head-url', options.headUrl] : []), '--server-pid', String(options.serverPid),
    '--streams', String(streams), '--duration', String(options.durationSeconds), '--ramp-timeout-ms', String(options.rampTimeoutMs),
    '--encoding', options.encoding,
  ];
  const coalesce = process.env.BENCH_SSE_COALESCE_US;
  const child = native ? spawnNative(native, [...args, ...(coalesce ? ['--coalesce-us', coalesce] : [])]) : spawnNodeScript(loadScript('sse-clients'), args, 'pipe');
  return { child, nextLine: jsonLineReader(child, native ? 'sse-clients (native)' : 'sse-clients') };
}

function merge(client: SseClientsResult['client'], reports: readonly SseClientsReport[]): SseClientsResult {
  const histogram = new LatencyHistogram();
  for (const report of reports) for (const [ms, count] of report.latencyCounts) histogram.record(ms, count);
  const sum = (value: (report: SseClientsReport) => number) => reports.reduce((total, report) => total + value(report), 0);
  const seen = reports.flatMap((report) => (report.sequences ? [report.sequences] : []));
  return {
    client,
    processes: reports.length,
    requested: sum((r) => r.requested),
    established: sum((r) => r.established),
    disconnects: sum((r) => r.disconnects),
    rampSeconds: Math.max(...reports.map((r) => r.rampSeconds)),
    windowSeconds: Math.max(...reports.map((r) => r.windowSeconds)),
    events: sum((r) => r.events),
    latencyMs: { p50: histogram.percentile(50), p99: histogram.percentile(99), max: histogram.max },
    sequences: seen.length === 0 ? null : { first: Math.min(...seen.map((s) => s.first)), last: Math.max(...seen.map((s) => s.last)) },
    serverCpuCores: sum((r) => r.serverCpuCores) / reports.length,
    clientCpuCores: sum((r) => r.clientCpuCores),
    clientLoopDelayP99Ms: Math.max(...reports.map((r) => r.clientLoopDelayP99Ms)),
    gzipStreams: sum((r) => r.gzipStreams),
    bodyBytes: sum((r) => r.bodyBytes),
  };
}

export async function runSseClientPool(options: SsePoolOptions): Promise<SseClientsResult> {
  const native = nativeSseClient().path;
  const client = native ? 'native' : 'node';
  const processes = Math.max(1, Math.min(availableParallelism(), Math.ceil(options.streams / STREAMS_PER_PROCESS[client])));
  const shares = Array.from({ length: processes }, (_, i) => Math.floor(options.streams / processes) + (i < options.streams % processes ? 1 : 0));
  const members = shares.map((streams) => startMember(options, streams, native));
  const deadline = setTimeout(() => members.forEach((member) => void stopProcess(member.child, 2000)), options.rampTimeoutMs + (options.durationSeconds + 60) * 1000);
  try {
    await Promise.all(members.map((member) => member.nextLine()));
    for (const member of members) member.child.stdin!.write('go\n');
    const reports = (await Promise.all(members.map((member) => member.nextLine()))) as SseClientsReport[];
    return merge(client, reports);
  } finally {
    clearTimeout(deadline);
    await Promise.all(members.map((member) => stopProcess(member.child, 2000)));
  }
}
