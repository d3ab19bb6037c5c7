/**
 * The cores a server process keeps busy with no load on it (for the bench node: its devnet producing
 * blocks, ingest, processors), measured over a few seconds before the load rounds. A per-request CPU
 * figure with this subtracted is what serving itself costs, comparable with a baseline that does
 * nothing at rest.
 */
import { startCpuMeter } from './process-cpu.js';

export async function restCpuCores(pid: number, seconds: number): Promise<number> {
  const meter = startCpuMeter(pid);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  return meter();
}

/** µs of server CPU per request, less what the server burns at rest (never below zero). */
export function cpuPerRequestAboveRest(serverCpuCores: number, restCores: number, requestsPerSecond: number): number {
  return (1e6 * Math.max(0, serverCpuCores - restCores)) / requestsPerSecond;
}
