/**
 * Workload `finality`: what proven finality costs and how fast it shows.
 *  - CPU per verified finality update (recorded mainnet objects, 512-member committee, keys already
 *    decoded: one aggregation of the participants' keys, one hash-to-curve, one pairing check).
 *  - CPU per sync-committee period: decoding and subgroup-checking the 512 keys of a new committee.
 *  - Latency from a new finality update at the devnet's Beacon API endpoint to the `finalized`
 *    change on `/stream`, with light-client finality (`finality.checkpoint_root`), two ways in the
 *    same run: polling only (`finality.event_stream = false`, `poll_interval_ms` = 250: the poll
 *    interval bounds it) and the endpoint's event stream (`event_stream = true`, the default
 *    `poll_interval_ms` = 2000 as the fallback).
 *  - The same latency with `finality.kind = "consensus_p2p"`: the devnet's libp2p peer (devnet.beacon_p2p) publishes
 *    the update on gossip when the devnet's head moves — the same moment its Beacon API endpoint starts serving it, so
 *    the endpoint (not used by the node in this mode) still marks when the update came out.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { committeeKeys } from '../../net/beacon/bls.js';
import { MAINNET } from '../../net/beacon/config.js';
import { parseBootstrap, parseFinalityUpdate, parseUpdate } from '../../net/beacon/json.js';
import { beaconHeaderRoot, initializeStore, processUpdate, validateFinalityUpdate } from '../../net/beacon/sync-protocol.js';
import { FIXTURES } from '../../test/support/paths.js';
import { freePort, startBenchNode } from '../node.js';
import { percentile, summarize } from '../stats.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

const DEVNET_CHECKPOINT = '0x09b0f1635ea8c671af3ba22f56bc2c58e66cb9925c5038a3ae20a9b850710b45';
const POLL_MS = 250;

const read = (file: string) => JSON.parse(readFileSync(join(FIXTURES, 'helios/beacon', file), 'utf8'));

function cpuMs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function verificationCosts(options: WorkloadOptions): { perUpdate: number[]; perPeriod: number[] } {
  const bootstrap = parseBootstrap(MAINNET, read('bootstrap.json'));
  const store = initializeStore(MAINNET, beaconHeaderRoot(bootstrap.header), bootstrap);
  for (const update of read('updates.json') as unknown[]) processUpdate(MAINNET, store, parseUpdate(MAINNET, update), 7_200_000);
  const update = parseFinalityUpdate(MAINNET, read('finality.json'));
  validateFinalityUpdate(MAINNET, store, update, 7_200_000);
  const count = options.smoke ? 3 : 20;
  const perUpdate: number[] = [];
  const perPeriod: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    perUpdate.push(cpuMs(() => { for (let i = 0; i < count; i++) validateFinalityUpdate(MAINNET, store, update, 7_200_000); }) / count);
    perPeriod.push(cpuMs(() => committeeKeys([...store.currentSyncCommittee.pubkeys])));
  }
  return { perUpdate, perPeriod };
}

interface LatencyMode { readonly label: string; readonly sets: (endpoint: string) => Promise<readonly string[]> }
const beaconApi = (endpoint: string) => ['finality.kind=beacon_api', `finality.urls=["${endpoint}"]`];
const POLLING: LatencyMode = { label: `polling ${POLL_MS} ms`, sets: async (endpoint) => [...beaconApi(endpoint), 'finality.event_stream=false', `finality.poll_interval_ms=${POLL_MS}`] };
const EVENTS: LatencyMode = { label: 'event stream', sets: async (endpoint) => [...beaconApi(endpoint), 'finality.event_stream=true', 'finality.poll_interval_ms=2000'] };
const CONSENSUS_P2P: LatencyMode = {
  label: 'consensus_p2p gossip',
  sets: async () => [
    `devnet.beacon_p2p=127.0.0.1:${await freePort()}`, 'finality.kind=consensus_p2p', 'finality.checkpoint_slot=0',
    'finality.discovery_port=0', 'finality.p2p_port=0', 'finality.poll_interval_ms=2000',
  ],
};

async function streamLatency(options: WorkloadOptions, mode: LatencyMode): Promise<number[]> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const node = await startBenchNode([
    // The smoke run only proves the path: blocks (and so finality updates) twice as often, a one-second window.
    `devnet.block_time_ms=${options.smoke ? 200 : 400}`, 'devnet.reorg_every=0', 'devnet.transactions_per_block=0', 'devnet.finality_lag=4',
    `devnet.beacon_api=127.0.0.1:${port}`, `finality.checkpoint_root=${DEVNET_CHECKPOINT}`, ...(await mode.sets(endpoint)),
  ], { readyTimeoutMs: 90_000 });
  const seenAt = new Map<number, number>();
  const latencies: number[] = [];
  const source = new EventSource(`${node.baseUrl}/v1/processors/blobs/stream`);
  source.addEventListener('finalized', (event) => {
    const at = performance.now();
    const number = (JSON.parse(event.data) as { block: { number: number } | null }).block?.number;
    const first = number === undefined ? undefined : seenAt.get(number);
    if (first !== undefined) latencies.push(at - first);
  });
  const deadline = performance.now() + (options.smoke ? 1 : Math.max(20, options.durationSeconds * options.rounds)) * 1000;
  const minimum = options.smoke ? 1 : 5;
  const giveUp = deadline + 120_000;
  try {
    while (performance.now() < deadline || latencies.length < minimum) {
      if (performance.now() > giveUp) throw new Error(`only ${latencies.length} finalized changes followed a finality update within two minutes`);
      const number = await latestFinalityUpdate(endpoint);
      if (Number.isFinite(number) && number > 0 && !seenAt.has(number)) seenAt.set(number, performance.now());
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    source.close();
    await node.stop();
  }
  return latencies;
}

/**
 * The execution block number of the endpoint's current finality update, or NaN while it has none
 * (before the devnet's first finalized block the endpoint answers 404 with an error body).
 */
async function latestFinalityUpdate(endpoint: string): Promise<number> {
  try {
    const response = await fetch(`${endpoint}/eth/v1/beacon/light_client/finality_update`);
    if (!response.ok) {
      await response.body?.cancel();
      return NaN;
    }
    const answer = (await response.json()) as { data?: { finalized_header?: { execution?: { block_number?: string } } } };
    return Number(answer.data?.finalized_header?.execution?.block_number ?? NaN);
  } catch {
    return NaN;
  }
}

export const finalityWorkload: Workload = {
  name: 'finality',
  description: 'light-client verification CPU (mainnet objects) and finality update → finalized on /stream latency (devnet Beacon API proof mode: polling, event stream; consensus_p2p gossip)',
  async run(options) {
    const { perUpdate, perPeriod } = verificationCosts(options);
    const modes = [POLLING, EVENTS, CONSENSUS_P2P];
    const figures: Figure[] = [
      { name: 'CPU per verified finality update (mainnet, 512 keys decoded)', unit: 'ms', better: 'lower', ...summarize(perUpdate) },
      { name: 'CPU per sync-committee period (decode 512 keys)', unit: 'ms', better: 'lower', ...summarize(perPeriod) },
    ];
    for (const mode of modes) {
      const latencies = (await streamLatency(options, mode)).sort((a, b) => a - b);
      const latencyFigure = (p: number): Figure => {
        const value = latencies.length ? percentile(latencies, p) : NaN;
        return { name: `finality update → finalized on /stream p${p} (${mode.label})`, unit: 'ms', better: 'lower', min: value, median: value, max: value };
      };
      figures.push(latencyFigure(50), latencyFigure(99), { name: `finalized changes measured (${mode.label})`, unit: 'count', min: latencies.length, median: latencies.length, max: latencies.length });
    }
    return figures;
  },
};
