/**
 * Workload `jsonrpc`: the JSON-RPC listener of a real node whose devnet makes mainnet-shaped blocks
 * (about 200 transactions each), under wrk POSTing one request (autocannon where wrk is missing; a
 * separate process either way; the description names the tool), against two other servers in the
 * same rounds:
 *   - a naive `node:http` baseline on the same LMDB in another process (JSON.parse the request,
 *     decode the block, JSON.stringify the reply, per request);
 *   - a ceiling: a bare uWebSockets.js server answering the node's very answer bytes to every
 *     request (ceiling-rpc-server.ts), i.e. what loopback and this machine allow for that answer size.
 * Methods:
 *   eth_getBlockByNumber  [n, true]   full transactions
 *   eth_getBlockByNumber  [n, false]  transaction hashes (a much smaller answer, for scale)
 *   eth_getBlockReceipts  [n]
 * and `newHeads` fan-out: N WebSocket subscribers in one load process, commit → client latency
 * (commit seen by an LMDB poller in that process). Answers are checked byte for byte before and
 * after each load run; any error, timeout or non-2xx fails the workload once every run is done.
 */
import { loadavg } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { compared, figure } from '../figures.js';
import { loadSeconds, loadTool, loadToolLabel, runHttpLoad, type LoadResult, type LoadTool } from '../load/http-load.js';
import { cpuPerRequestAboveRest, restCpuCores } from '../load/rest-cpu.js';
import { runJsonScript } from '../load/run-json.js';
import { startServerProcess, type ServerProcess } from '../load/server-process.js';
import { startBenchNode, type BenchNode } from '../node.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

const BASELINE = 'naive node:http';
const CEILING = 'ceiling: bare uWS, same bytes';

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

async function post(url: string, body: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  if (response.status !== 200) throw new Error(`POST ${url} answered ${response.status}`);
  return response.text();
}

interface Target {
  readonly url: string;
  readonly pid: number;
  readonly runs: LoadResult[];
}

async function measureMethod(node: BenchNode, nodeRestCores: number, baseline: ServerProcess, name: string, body: string, options: WorkloadOptions, tool: LoadTool, failures: string[]): Promise<Figure[]> {
  const expected = await post(node.rpcUrl, body);
  if (expected.includes('"error"')) throw new Error(`${name}: the node answered an error: ${expected.slice(0, 300)}`);
  if (!isDeepStrictEqual(JSON.parse(expected), JSON.parse(await post(baseline.baseUrl, body)))) throw new Error(`${name}: the baseline's answer differs from the node's`);
  const ceiling = await startServerProcess('ceiling-rpc-server', ['--rpc-url', node.rpcUrl, '--body', body]);
  try {
    if (await post(ceiling.baseUrl, body) !== expected) throw new Error(`${name}: the ceiling server's answer differs from the node's`);
    const targets: Record<'node' | 'baseline' | 'ceiling', Target> = {
      node: { url: node.rpcUrl, pid: node.pid, runs: [] },
      baseline: { url: baseline.baseUrl, pid: baseline.pid, runs: [] },
      ceiling: { url: ceiling.baseUrl, pid: ceiling.pid, runs: [] },
    };
    for (let round = 0; round < options.rounds; round += 1) {
      for (const target of Object.values(targets)) {
        const run = await runHttpLoad({ url: target.url, body, serverPid: target.pid, connections: options.connections ?? 50, durationSeconds: loadSeconds(options, tool) }, tool);
        if (run.failures > 0) failures.push(`${name} on ${target.url}: ${run.failures}`);
        target.runs.push(run);
      }
      if (await post(node.rpcUrl, body) !== expected) failures.push(`${name}: the node's answer changed under load`);
    }
    const nodeRuns = targets.node.runs;
    const of = (figureName: string, unit: string, value: (run: LoadResult) => number, better?: Figure['better']) =>
      compared(`${name}: ${figureName}`, unit, nodeRuns.map(value), { name: BASELINE, values: targets.baseline.runs.map(value) }, better);
    const vsCeiling = (figureName: string, unit: string, value: (run: LoadResult) => number, better?: Figure['better']) =>
      compared(`${name}: ${figureName} vs ceiling`, unit, nodeRuns.map(value), { name: CEILING, values: targets.ceiling.runs.map(value) }, better);
    const cpuPerRequest = (r: LoadResult) => (1e6 * r.serverCpuCores) / r.requestsPerSecond;
    // The node's devnet keeps producing blocks meanwhile; the other two servers do nothing at rest.
    const nodeAboveRest = nodeRuns.map((r) => cpuPerRequestAboveRest(r.serverCpuCores, nodeRestCores, r.requestsPerSecond));
    const aboveRest = (against: 'baseline' | 'ceiling') =>
      compared(`${name}: server CPU per request above rest${against === 'ceiling' ? ' vs ceiling' : ''}`, 'µs', nodeAboveRest, { name: against === 'ceiling' ? CEILING : BASELINE, values: targets[against].runs.map(cpuPerRequest) }, 'lower');
    return [
      figure(`${name}: answer size`, 'bytes', [Buffer.byteLength(expected)]),
      of('throughput', 'req/s', (r) => r.requestsPerSecond, 'higher'),
      vsCeiling('throughput', 'req/s', (r) => r.requestsPerSecond, 'higher'),
      of('latency p50', 'ms', (r) => r.latencyP50Ms, 'lower'),
      of('latency p99', 'ms', (r) => r.latencyP99Ms, 'lower'),
      vsCeiling('latency p99', 'ms', (r) => r.latencyP99Ms, 'lower'),
      of('bytes served', 'MB/s', (r) => r.bytesPerSecond / 1e6, 'higher'),
      of('server CPU', 'cores', (r) => r.serverCpuCores),
      // On a shared machine throughput follows the cores each server got; CPU time per request does not.
      of('server CPU per request', 'µs', cpuPerRequest, 'lower'),
      vsCeiling('server CPU per request', 'µs', cpuPerRequest, 'lower'),
      aboveRest('baseline'),
      aboveRest('ceiling'),
      of('load generator CPU', 'cores', (r) => r.loadGeneratorCpuCores),
    ];
  } finally {
    await ceiling.stop();
  }
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
  get description() {
    return `JSON-RPC eth_getBlockByNumber (full txs and hashes only, ~200-tx blocks) and eth_getBlockReceipts under ${loadToolLabel()}, vs a naive node:http baseline on the same LMDB and a bare-uWS ceiling serving the same bytes; newHeads fan-out to 1,000 WebSocket subscribers`;
  },
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
        const tool = loadTool();
        const restCores = await restCpuCores(node.pid, options.smoke ? 1 : 3);
        figures.push(figure('node CPU at rest (devnet producing blocks, no requests)', 'cores', [restCores]));
        const method = (name: string, rpc: string, params: string) =>
          measureMethod(node, restCores, baseline, name, `{"jsonrpc":"2.0","id":1,"method":"${rpc}","params":${params}}`, options, tool, failures);
        figures.push(...await method('eth_getBlockByNumber (full transactions)', 'eth_getBlockByNumber', `["${blockTag}",true]`));
        figures.push(...await method('eth_getBlockByNumber (transaction hashes)', 'eth_getBlockByNumber', `["${blockTag}",false]`));
        figures.push(...await method('eth_getBlockReceipts', 'eth_getBlockReceipts', `["${blockTag}"]`));
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
