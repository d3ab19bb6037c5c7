/**
 * Workload `query`: the typed blob routes under load from wrk, or autocannon where wrk is missing
 * (http-load.ts; a separate process either way; the description names the tool), against
 * a real node whose devnet has produced enough blocks, and against a naive `node:http` baseline
 * reading the same LMDB from another process (JSON.parse/JSON.stringify per request):
 *   one block   GET /v1/q/blobs/blocks/{n}
 *   range page  GET /v1/q/blobs/blocks?fromBlock=a&toBlock=a+width−1&limit=width
 *   entity pages GET /v1/processors/blobs/collections/{blocks,transactions}/entities?fromBlock=a&toBlock=a+width−1&limit=width
 * Each run also reports the cores the server and the load generator kept busy (on a shared machine, read
 * throughput together with those).
 *
 * Two settings of the node, both reported: first while its devnet keeps committing a block every 100 ms
 * (ten blocks a second: 0.2–0.3 of a core for generating, verifying and processing them), then, for the
 * one-block scenarios, the same node restarted on the same data with a block every second (`at one
 * block per 1 s, …`; still twelve times mainnet's pace, and what a node serving a followed chain spends
 * at rest is closer to this). Any connection error, timeout or non-2xx response, from either
 * server, fails the workload once every run is done (the message names each failing run).
 */
import { loadavg } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { compared } from '../figures.js';
import { loadSeconds, loadTool, loadToolLabel, runHttpLoad, type LoadResult } from '../load/http-load.js';
import { cpuPerRequestAboveRest, restCpuCores } from '../load/rest-cpu.js';
import { startServerProcess, type ServerProcess } from '../load/server-process.js';
import { startBenchNode, steadyDevnet, type BenchNode } from '../node.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

/** What every query figure is compared against, in the same run. */
const BASELINE = 'naive node:http';

interface Scenario {
  readonly name: string;
  readonly path: string;
  /** Requests the load generator keeps in flight per connection (1: wait for each reply). */
  readonly pipelining: number;
  /** The part of a reply both servers must agree on. */
  readonly rows: (body: unknown) => unknown;
  /** Measured again with the devnet at one block per second. */
  readonly calm: boolean;
}

interface Shape {
  readonly blockTimeMs: number;
  /** Blocks the devnet must have produced before any load starts. */
  readonly blocks: number;
  /** The block the one-block route asks for. */
  readonly oneBlock: number;
  /** The first block and the width of the range page. */
  readonly rangeFrom: number;
  readonly rangeWidth: number;
}

const FULL: Shape = { blockTimeMs: 100, blocks: 120, oneBlock: 100, rangeFrom: 10, rangeWidth: 100 };
const SMOKE: Shape = { blockTimeMs: 50, blocks: 30, oneBlock: 10, rangeFrom: 5, rangeWidth: 20 };
/** The devnet's pace in the second setting (≤ 1000 ms keeps the chain the first one produced). */
const CALM_BLOCK_TIME_MS = 1000;
const CALM = `at one block per ${CALM_BLOCK_TIME_MS / 1000} s`;

/** A page of one of the blob processor's collections over blocks `from`..`to`, compared by its rows. */
function entityPage(name: string, collection: string, from: number, to: number, limit: number): Scenario {
  const path = `/v1/processors/blobs/collections/${collection}/entities?fromBlock=${from}&toBlock=${to}&limit=${limit}`;
  return { name, path, pipelining: 1, rows: (body) => (body as { data: unknown }).data, calm: false };
}

function scenarios(shape: Shape): Scenario[] {
  const rangeTo = shape.rangeFrom + shape.rangeWidth - 1;
  return [
    { name: 'one block', path: `/v1/q/blobs/blocks/${shape.oneBlock}`, pipelining: 1, rows: (body) => body, calm: true },
    // A cheaper load generator per request: shows what the server does when the generator is not the limit.
    { name: 'one block, 10 pipelined per connection', path: `/v1/q/blobs/blocks/${shape.oneBlock}`, pipelining: 10, rows: (body) => body, calm: true },
    {
      name: `${shape.rangeWidth}-block page`,
      path: `/v1/q/blobs/blocks?fromBlock=${shape.rangeFrom}&toBlock=${rangeTo}&limit=${shape.rangeWidth}`,
      pipelining: 1,
      rows: (body) => (body as { data: unknown }).data,
      calm: false,
    },
    // The generic entity API (spec §2.7): each result wraps the stored row with key, schema, block and finality.
    entityPage(`${shape.rangeWidth}-block entity page`, 'blocks', shape.rangeFrom, rangeTo, shape.rangeWidth),
    entityPage(`blob transactions entity page (up to ${shape.rangeWidth} rows)`, 'transactions', shape.rangeFrom, rangeTo, shape.rangeWidth),
  ];
}

async function fetchJson(url: string): Promise<unknown> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

/** The baseline must serve the very rows the node serves, or the ratio means nothing. */
async function assertSameRows(node: BenchNode, baseline: ServerProcess, scenario: Scenario): Promise<void> {
  const [fromNode, fromBaseline] = await Promise.all([fetchJson(node.baseUrl + scenario.path), fetchJson(baseline.baseUrl + scenario.path)]);
  if (!isDeepStrictEqual(scenario.rows(fromNode), scenario.rows(fromBaseline))) throw new Error(`${scenario.name}: the baseline's rows differ from the node's`);
}

async function measure(node: BenchNode, nodeRestCores: number, baseline: ServerProcess, scenario: Scenario, options: WorkloadOptions, failures: string[], setting = ''): Promise<Figure[]> {
  const nodeRuns: LoadResult[] = [];
  const baselineRuns: LoadResult[] = [];
  const tool = loadTool();
  const load = async (url: string, serverPid: number, runs: LoadResult[]) => {
    const result = await runHttpLoad({ url, serverPid, connections: options.connections ?? 50, durationSeconds: loadSeconds(options, tool), pipelining: scenario.pipelining }, tool);
    if (result.failures > 0) failures.push(`GET ${url}: ${result.failures}`);
    runs.push(result);
  };
  for (let round = 0; round < options.rounds; round += 1) {
    await load(node.baseUrl + scenario.path, node.pid, nodeRuns);
    await load(baseline.baseUrl + scenario.path, baseline.pid, baselineRuns);
  }
  const title = setting === '' ? scenario.name : `${setting}, ${scenario.name}`;
  const of = (name: string, unit: string, value: (run: LoadResult) => number, better?: Figure['better']) =>
    compared(`${title}: ${name}`, unit, nodeRuns.map(value), { name: BASELINE, values: baselineRuns.map(value) }, better);
  return [
    of('throughput', 'req/s', (r) => r.requestsPerSecond, 'higher'),
    of('latency p50', 'ms', (r) => r.latencyP50Ms, 'lower'),
    of('latency p99', 'ms', (r) => r.latencyP99Ms, 'lower'),
    of('server CPU', 'cores', (r) => r.serverCpuCores),
    // Throughput on a shared machine follows the cores the server got; its CPU time per request does not.
    of('server CPU per request', 'µs', (r) => (1e6 * r.serverCpuCores) / r.requestsPerSecond, 'lower'),
    // The node's devnet keeps producing blocks meanwhile; the baseline does nothing at rest.
    compared(`${title}: server CPU per request above rest`, 'µs', nodeRuns.map((r) => cpuPerRequestAboveRest(r.serverCpuCores, nodeRestCores, r.requestsPerSecond)),
      { name: BASELINE, values: baselineRuns.map((r) => (1e6 * r.serverCpuCores) / r.requestsPerSecond) }, 'lower'),
    of('load generator CPU', 'cores', (r) => r.loadGeneratorCpuCores),
  ];
}

export const queryWorkload: Workload = {
  name: 'query',
  get description() {
    return `typed blob routes (one block, a block-range page) and generic entity pages (blocks, transactions) under ${loadToolLabel()}, vs a naive node:http + JSON baseline on the same LMDB`;
  },
  async run(options) {
    const shape = options.smoke ? SMOKE : FULL;
    const loadAtStart = loadavg()[0]!;
    let node = await startBenchNode(steadyDevnet(shape.blockTimeMs));
    try {
      const lastNeeded = Math.max(shape.blocks, shape.rangeFrom + shape.rangeWidth) - 1;
      await node.waitFor(`block ${lastNeeded} served`, async () => (await fetch(`${node.baseUrl}/v1/q/blobs/blocks/${lastNeeded}`)).status === 200, 120_000 + 2 * lastNeeded * shape.blockTimeMs);
      const baseline = await startServerProcess('naive-server', ['--data-dir', node.dataDir]);
      try {
        const restCores = await restCpuCores(node.pid, options.smoke ? 1 : 3);
        const figures: Figure[] = [
          { name: 'machine load average (1 min) at start', unit: 'load', min: loadAtStart, median: loadAtStart, max: loadAtStart },
          { name: 'node CPU at rest (devnet producing blocks, no requests)', unit: 'cores', min: restCores, median: restCores, max: restCores },
        ];
        const failures: string[] = [];
        // The smoke run leaves out the pipelined repeat of a route it already loads (the harness path is the same).
        const chosen = scenarios(shape).filter((one) => !options.smoke || one.pipelining === 1);
        for (const scenario of chosen) {
          await assertSameRows(node, baseline, scenario);
          figures.push(...await measure(node, restCores, baseline, scenario, options, failures));
        }
        node = await node.restart(steadyDevnet(CALM_BLOCK_TIME_MS));
        const calmRest = await restCpuCores(node.pid, options.smoke ? 1 : 3);
        figures.push({ name: `${CALM}: node CPU at rest`, unit: 'cores', min: calmRest, median: calmRest, max: calmRest });
        for (const scenario of chosen.filter((one) => one.calm)) {
          await assertSameRows(node, baseline, scenario);
          figures.push(...await measure(node, calmRest, baseline, scenario, options, failures, CALM));
        }
        if (failures.length > 0) throw new Error(`errors, timeouts or non-2xx responses under load: ${failures.join('; ')}`);
        figures.push({ name: 'runs with errors, timeouts or non-2xx', unit: 'runs', min: failures.length, median: failures.length, max: failures.length });
        return figures;
      } finally {
        await baseline.stop();
      }
    } finally {
      await node.stop();
    }
  },
};
