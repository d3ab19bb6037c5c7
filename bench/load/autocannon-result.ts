/** The part of an autocannon-run result the query workload reports. */
import type { Result } from 'autocannon';
import { runJsonScript } from './run-json.js';

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  /** Connection errors, timeouts and non-2xx responses together. */
  readonly failures: number;
  readonly serverCpuCores: number;
  readonly loadGeneratorCpuCores: number;
}

type RunOutput = Result & { serverCpuCores: number; loadGeneratorCpuCores: number };

export async function runAutocannon(url: string, serverPid: number, connections: number, durationSeconds: number, pipelining = 1): Promise<LoadResult> {
  const args = ['--url', url, '--server-pid', String(serverPid), '--connections', String(connections), '--duration', String(durationSeconds), '--pipelining', String(pipelining)];
  const result = await runJsonScript<RunOutput>('autocannon-run', args, (durationSeconds + 60) * 1000);
  return {
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    failures: result.errors + result.timeouts + result.non2xx,
    serverCpuCores: result.serverCpuCores,
    loadGeneratorCpuCores: result.loadGeneratorCpuCores,
  };
}
