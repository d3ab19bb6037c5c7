/**
 * Workload `jsonrpc`: the JSON-RPC listener of a real node whose devnet makes mainnet-shaped blocks
 * (about 200 transactions each), under autocannon POSTing one request (a separate process), against a
 * naive `node:http` baseline on the same LMDB in another process (JSON.parse the request, decode the
 * block, JSON.stringify the reply, per request):
 *   eth_getBlockByNumber  [n, true]   full transactions
 *   eth_getBlockReceipts  [n]
 * and `newHeads` fan-out: N WebSocket subscribers in one load process, commit → client latency
 * (commit seen by an LMDB poller in that process). Answers are checked byte for byte before and
 * after each load run; any error, timeout or non-2xx fails the workload once every run is done.
 */
import { loadavg } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { compared, figure } from '../figures.js';
import type { LoadResult } from '../load/autocannon-result.js';
import { runJsonScript } from '../load/run-json.js';
import { startServerProcess, type ServerProcess } from '../load/server-process.js';
import { startBenchNode, type BenchNode } from '../node.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

const BASELINE = 'naive node:http';

interface Shape {
  readonly transactionsPerBlock: number;
  readonly blockTimeMs: number;
  /** The block loaded (its number must exist before load starts). */
  readonly block: number;
  readonly subscribers: number;
  readonly fanoutSeconds: number;
  /** Block time during the fan-out run (a separate node). */
  readonly fanoutBlockTimeMs: number;
}

const FULL: Shape = { transactionsPerBlock: 200, blockTimeMs: 2500, block: 3, subscribers: 1000, fanoutSeconds: 20, fanoutBlockTimeMs: 500 };
const SMOKE: Shape = { transactionsPerBlock: 20, blockTimeMs: 300, block: 2, subscribers: 20, fanoutSeconds: 2, fanoutBlockTimeMs: 200 };

interface LoadRun extends LoadResult {
  readonly bytesPerSecond: number;
}

type AutocannonOutput = {
  requests: { average: number }; latency: { p50: number; p99: number }; throughput: { average: number };
  errors: number; timeouts: number; non2xx: number; serverCpuCores: number; loadGeneratorCpuCores: number;
};

async function post(url: string, body: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  if (response.status !== 200) throw new Error(`POST ${url} answered ${response.status}`);
  return response.text();
}

async function load(url: string, body: string, pid: number, options: WorkloadOptions): Promise<LoadRun> {
  const args = ['--url', url, '--body', body, '--server-pid', String(pid), '--connections', String(options.connections ?? 50), '--duration', String(options.durationSeconds)];
  const r = await runJsonScript<AutocannonOutput>('autocannon-post-run', args, (options.durationSeconds + 60) * 1000);
  return {
    requestsPerSecond: r.requests.average, latencyP50Ms: r.latency.p50, latencyP99Ms: r.latency.p99, failures: r.errors + r.timeouts + r.non2xx,
    serverCpuCores: r.serverCpuCores, loadGeneratorCpuCores: r.loadGeneratorCpuCores, bytesPerSecond: r.throughput.average,
  };
}

async function measureMethod(node: BenchNode, baseline: ServerProcess, name: string, body: string, options: WorkloadOptions, failures: string[]): Promise<Figure[]> {
  const expected = await post(node.rpcUrl, body);
  if (expected.includes('"error"')) throw new Error(`${name}: the node answered an error: ${expected.slice(0, 300)}`);
  if (!isDeepStrictEqual(JSON.parse(expected), JSON.parse(await post(baseline.baseUrl, body)))) throw new Error(`${name}: the baseline's answer differs from the node's`);
  const nodeRuns: LoadRun[] = [];
  const baselineRuns: LoadRun[] = [];
  for (let round = 0; round < options.rounds; round += 1) {
    for (const [url, pid, runs] of [[node.rpcUrl, node.pid, nodeRuns], [baseline.baseUrl, baseline.pid, baselineRuns]] as const) {
      const run = await load(url, body, pid, options);
      if (run.failures > 0) failures.push(`${name} on ${url}: ${run.failures}`);
      runs.push(run);
    }
    if (await post(node.rpcUrl, body) !== expected) failures.push(`${name}: the node's answer changed under load`);
  }
  const of = (figureName: string, unit: string, value: (run: LoadRun) => number, better?: Figure['better']) =>
    compared(`${name}: ${figureName}`, unit, nodeRuns.map(value), { name: BASELINE, values: baselineRuns.map(value) }, better);
  return [
    figure(`${name}: answer size`, 'bytes', [Buffer.byteLength(expected)]),
    of('throughput', 'req/s', (r) => r.requestsPerSecond, 'higher'),
    of('latency p50', 'ms', (r) => r.latencyP50Ms, 'lower'),
    of('latency p99', 'ms', (r) => r.latencyP99Ms, 'lower'),
    of('bytes served', 'MB/s', (r) => r.bytesPerSecond / 1e6, 'higher'),
    of('server CPU', 'cores', (r) => r.serverCpuCores),
    of('load generator CPU', 'cores', (r) => r.loadGeneratorCpuCores),
  ];
}

interface FanoutOutput { clients: number; blocks: number; notifications: number; p50Ms: number; p99Ms: number; maxMs: number }

async function measureFanout(shape: Shape, options: WorkloadOptions): Promise<Figure[]> {
  const node = await startBenchNode([`devnet.block_time_ms=${shape.fanoutBlockTimeMs}`, 'devnet.reorg_every=0', 'devnet.transactions_per_block=0']);
  try {
    const runs: FanoutOutput[] = [];
    for (let round = 0; round < options.rounds; round += 1) {
      const args = ['--ws', node.wsUrl, '--data-dir', node.dataDir, '--clients', String(shape.subscribers), '--duration', String(options.smoke ? shape.fanoutSeconds : Math.max(shape.fanoutSeconds, options.durationSeconds))];
      runs.push(await runJsonScript<FanoutOutput>('newheads-fanout', args, 300_000));
    }
    const label = `newHeads to ${shape.subscribers} WebSocket subscribers`;
    return [
      figure(`${label}: commit → client p50`, 'ms', runs.map((r) => r.p50Ms), 'lower'),
      figure(`${label}: commit → client p99`, 'ms', runs.map((r) => r.p99Ms), 'lower'),
      figure(`${label}: commit → client max`, 'ms', runs.map((r) => r.maxMs), 'lower'),
      figure(`${label}: notifications per block`, 'notifications', runs.map((r) => r.notifications / Math.max(1, r.blocks))),
    ];
  } finally {
    await node.stop();
  }
}

export const jsonrpcWorkload: Workload = {
  name: 'jsonrpc',
  description: 'JSON-RPC eth_getBlockByNumber (full txs, ~200-tx blocks) and eth_getBlockReceipts under autocannon vs a naive node:http baseline on the same LMDB; newHeads fan-out to 1,000 WebSocket subscribers',
  async run(options) {
    const shape = options.smoke ? SMOKE : FULL;
    const loadAtStart = loadavg()[0]!;
    const figures: Figure[] = [{ name: 'machine load average (1 min) at start', unit: 'load', min: loadAtStart, median: loadAtStart, max: loadAtStart }];
    const failures: string[] = [];
    const node = await startBenchNode([`devnet.block_time_ms=${shape.blockTimeMs}`, 'devnet.reorg_every=0', `devnet.transactions_per_block=${shape.transactionsPerBlock}`]);
    try {
      const blockTag = `0x${shape.block.toString(16)}`;
      await node.waitFor(`block ${shape.block}`, async () => !(await post(node.rpcUrl, `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["${blockTag}",false]}`)).includes('"result":null'), 180_000);
      const baseline = await startServerProcess('naive-rpc-server', ['--data-dir', node.dataDir]);
      try {
        figures.push(...await measureMethod(node, baseline, 'eth_getBlockByNumber (full transactions)', `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["${blockTag}",true]}`, options, failures));
        figures.push(...await measureMethod(node, baseline, 'eth_getBlockReceipts', `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockReceipts","params":["${blockTag}"]}`, options, failures));
      } finally {
        await baseline.stop();
      }
    } finally {
      await node.stop();
    }
    figures.push(...await measureFanout(shape, options));
    if (failures.length > 0) throw new Error(`errors, timeouts, non-2xx or changed answers under load: ${failures.join('; ')}`);
    return figures;
  },
};
