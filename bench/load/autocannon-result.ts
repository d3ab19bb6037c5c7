/** One autocannon run (autocannon-run.ts, in its own process) turned into the load kit's LoadResult. */
import type { Result } from 'autocannon';
import type { LoadRequest, LoadResult } from './http-load.js';
import { runJsonScript } from './run-json.js';

type RunOutput = Result & { serverCpuCores: number; loadGeneratorCpuCores: number };

export async function runAutocannon(request: LoadRequest): Promise<LoadResult> {
  const args = [
    '--url', request.url, '--server-pid', String(request.serverPid), '--connections', String(request.connections),
    '--duration', String(request.durationSeconds), '--pipelining', String(request.pipelining ?? 1),
    ...(request.body === undefined ? [] : ['--body', request.body]),
  ];
  const result = await runJsonScript<RunOutput>('autocannon-run', args, (request.durationSeconds + 60) * 1000);
  return {
    tool: 'autocannon',
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    bytesPerSecond: result.throughput.average,
    failures: result.errors + result.timeouts + result.non2xx,
    serverCpuCores: result.serverCpuCores,
    loadGeneratorCpuCores: result.loadGeneratorCpuCores,
  };
}
