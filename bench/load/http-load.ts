/**
 * One HTTP load run against one URL, by whichever load generator this machine has: `wrk` (C, far
 * cheaper per request, so the server rather than the generator is what runs out of CPU) when it is
 * on the PATH, else autocannon (an npm dependency, so always there: CI has no wrk). Set
 * `BENCH_LOAD_TOOL=autocannon` (or `wrk`) to choose. Every figure built from a run says which tool made it.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { runAutocannon } from './autocannon-result.js';
import { runWrk } from './wrk-run.js';
import type { WorkloadOptions } from '../workload.js';

export type LoadTool = 'wrk' | 'autocannon';

export interface LoadRequest {
  readonly url: string;
  /** A JSON body makes the request a POST with `content-type: application/json`; absent: GET. */
  readonly body?: string;
  readonly serverPid: number;
  readonly connections: number;
  readonly durationSeconds: number;
  /** Requests kept in flight per connection (1: wait for each reply). */
  readonly pipelining?: number;
}

export interface LoadResult {
  readonly tool: LoadTool;
  readonly requestsPerSecond: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  /** Response bytes (headers included) received per second. */
  readonly bytesPerSecond: number;
  /** Connection errors, timeouts and non-2xx responses together. */
  readonly failures: number;
  readonly serverCpuCores: number;
  readonly loadGeneratorCpuCores: number;
}

/**
 * Seconds of one load run: `--duration`, or half a second under `--smoke`, which only proves the path (a run
 * loads two processes flat out, and the smoke makes about twenty of them; wrk takes whole seconds, so at least 1).
 */
export function loadSeconds(options: Pick<WorkloadOptions, 'smoke' | 'durationSeconds'>, tool: LoadTool = loadTool()): number {
  if (!options.smoke) return options.durationSeconds;
  return tool === 'wrk' ? 1 : 0.5;
}

/** Where `wrk` is on the PATH, or undefined. */
export function findWrk(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'wrk');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** The load generator runs use: `BENCH_LOAD_TOOL` if set, else wrk when installed, else autocannon. */
export function loadTool(): LoadTool {
  const chosen = process.env.BENCH_LOAD_TOOL;
  if (chosen === 'wrk' || chosen === 'autocannon') {
    if (chosen === 'wrk' && findWrk() === undefined) throw new Error('BENCH_LOAD_TOOL=wrk but wrk is not on the PATH');
    return chosen;
  }
  if (chosen !== undefined && chosen !== '') throw new Error(`BENCH_LOAD_TOOL must be wrk or autocannon, not '${chosen}'`);
  return findWrk() === undefined ? 'autocannon' : 'wrk';
}

/** How a workload's description names the tool, e.g. `wrk (1 thread)`. */
export function loadToolLabel(tool: LoadTool = loadTool()): string {
  return tool === 'wrk' ? 'wrk (1 thread)' : 'autocannon';
}

export function runHttpLoad(request: LoadRequest, tool: LoadTool = loadTool()): Promise<LoadResult> {
  return tool === 'wrk' ? runWrk(findWrk()!, request) : runAutocannon(request);
}
