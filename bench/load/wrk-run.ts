/**
 * One `wrk` run (https://github.com/wg/wrk, Debian's `wrk` package) against one URL: one thread,
 * `--latency`, and a Lua script that sets the POST body (JSON-RPC), pipelines requests when asked,
 * and prints wrk's own totals and latency percentiles as one JSON line (`WRK_RESULT {…}`) so nothing
 * is parsed back out of rounded human units. wrk's CPU time comes from bash's `times` (its children),
 * the server's from /proc over the same stretch.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trackChild, trackDirectory } from '../leftovers.js';
import type { LoadRequest, LoadResult } from './http-load.js';
import { startCpuMeter } from './process-cpu.js';
import { exitOf, stopProcess } from './spawn.js';

/**
 * Runs in every wrk thread. Without a `request` function wrk sends one pre-built request over and
 * over (its cheapest path); with pipelining it sends `depth` copies of it per write.
 */
const SCRIPT = `
local body = os.getenv("WRK_BODY")
local depth = tonumber(os.getenv("WRK_PIPELINE") or "1")
if body ~= nil and body ~= "" then
  wrk.method = "POST"
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end
local batch
init = function(args)
  batch = string.rep(wrk.format(), depth)
end
if depth > 1 then
  request = function() return batch end
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"requests":%d,"durationUs":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50Us":%.1f,"p99Us":%.1f}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

interface WrkTotals {
  requests: number; durationUs: number; bytes: number;
  connect: number; read: number; write: number; status: number; timeout: number;
  p50Us: number; p99Us: number;
}

/** bash's `times` prints the shell's then its children's user and system time, e.g. `0m1.250s 0m0.310s`. */
function childCpuSeconds(timesOutput: string): number {
  const lines = timesOutput.trim().split('\n');
  const children = lines[lines.length - 1] ?? '';
  let seconds = 0;
  for (const [, minutes, secs] of children.matchAll(/(\d+)m([\d.]+)s/g)) seconds += Number(minutes) * 60 + Number(secs);
  return seconds;
}

export async function runWrk(wrk: string, request: LoadRequest): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-wrk-'));
  const removeDir = trackDirectory(dir);
  try {
    const script = join(dir, 'load.lua');
    writeFileSync(script, SCRIPT);
    const timeout = Math.max(10, request.durationSeconds);
    const args = ['-t', '1', '-c', String(request.connections), '-d', `${request.durationSeconds}s`, '--timeout', `${timeout}s`, '--latency', '-s', script, request.url];
    // `times` after wrk exits: the CPU time wrk (bash's only child) used, on stderr, after wrk's own output.
    const wrapper = 'ulimit -n "$(ulimit -Hn)"; "$@"; code=$?; echo WRK_TIMES >&2; times >&2; exit $code';
    const env = { ...process.env, WRK_BODY: request.body ?? '', WRK_PIPELINE: String(request.pipelining ?? 1) };
    const serverCpu = startCpuMeter(request.serverPid);
    const wallStart = performance.now();
    const child = trackChild(spawn('bash', ['-c', wrapper, 'bash', wrk, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
    child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    const timer = setTimeout(() => void stopProcess(child, 2000), (request.durationSeconds + 30) * 1000);
    const code = await exitOf(child);
    clearTimeout(timer);
    const serverCpuCores = serverCpu();
    const wallSeconds = (performance.now() - wallStart) / 1000;
    const line = stdout.split('\n').find((l) => l.startsWith('WRK_RESULT '));
    if (code !== 0 || line === undefined) throw new Error(`wrk exited with ${code} and no result: ${stdout.slice(-1000)} ${stderr.slice(-1000)}`);
    const totals = JSON.parse(line.slice('WRK_RESULT '.length)) as WrkTotals;
    const seconds = totals.durationUs / 1e6;
    const timesOutput = stderr.slice(stderr.lastIndexOf('WRK_TIMES') + 'WRK_TIMES'.length);
    return {
      tool: 'wrk',
      requestsPerSecond: totals.requests / seconds,
      latencyP50Ms: totals.p50Us / 1000,
      latencyP99Ms: totals.p99Us / 1000,
      bytesPerSecond: totals.bytes / seconds,
      failures: totals.connect + totals.read + totals.write + totals.status + totals.timeout,
      serverCpuCores,
      loadGeneratorCpuCores: childCpuSeconds(timesOutput) / wallSeconds,
    };
  } finally {
    removeDir();
  }
}
