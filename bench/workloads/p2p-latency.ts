/**
 * Workload `p2p-latency`: how long a new block takes from the serving peer to a follower's `/stream`.
 *
 * A producer node makes the devnet chain (one block a second, no reorgs; four a second with --smoke) and serves it over RLPx
 * (`[devnet] p2p_listen`), announcing every new head to eth/69 sessions with BlockRangeUpdate the moment it has
 * committed it. Two followers run beside it in the same run, each with its own blobs instance:
 *  - `p2p`: `[sources.live] kind = "p2p"` with the producer as trusted peer (the announcement wakes it; it then asks
 *    for the header, body and receipts and verifies the block before recording it);
 *  - `rpc` (the baseline): `[sources.live] kind = "rpc"` on the producer's JSON-RPC, with `ws_url` so `newHeads`
 *    pushes each head (the fastest way the rpc source learns of a block).
 * For every block the time is taken when the producer's own `/stream` carries its `apply` change (the producer
 * announces right after that commit, so this is the announcement, to within the producer's fan-out) and when each
 * follower's `/stream` carries the `apply` change of the same block hash: the difference is announcement → change
 * on the follower's `/stream`, p50 and p99 over the blocks of the run. All three streams are read by the
 * `eventsource` client in this process.
 */
import { EventSource } from 'eventsource';
import { devnetPeerKey } from '../../net/devnet/p2p-server.js';
import { formatEnode, nodeIdOf } from '../../net/p2p/enode.js';
import { freePort, startBenchNode, type BenchNode } from '../node.js';
import { percentile } from '../stats.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

/**
 * The devnet every node of the run is configured with (the p2p follower takes its genesis and fork schedule from it;
 * the rpc follower from the producer's eth_config, which needs every fork at genesis, as in the backfill workload).
 */
function devnet(blockTimeMs: number): string[] {
  return [`devnet.block_time_ms=${blockTimeMs}`, 'devnet.reorg_every=0', 'devnet.finality_lag=4', 'devnet.prague_after_seconds=0', 'devnet.osaka_after_seconds=0', 'devnet.bpo1_after_seconds=0'];
}

/** Arrival time (performance.now()) of each block hash's `apply` change on one node's blobs stream. */
function follow(node: BenchNode): { seen: Map<string, number>; close: () => void } {
  const seen = new Map<string, number>();
  const source = new EventSource(`${node.baseUrl}/v1/processors/blobs/stream`);
  source.addEventListener('apply', (event) => {
    const at = performance.now();
    const hash = (JSON.parse(event.data) as { block?: { hash?: string } }).block?.hash;
    if (hash !== undefined && !seen.has(hash)) seen.set(hash, at);
  });
  return { seen, close: () => source.close() };
}

function latencies(producer: Map<string, number>, follower: Map<string, number>): number[] {
  const out: number[] = [];
  for (const [hash, at] of follower) {
    const announced = producer.get(hash);
    if (announced !== undefined) out.push(at - announced);
  }
  return out.sort((a, b) => a - b);
}

async function run(options: WorkloadOptions): Promise<Figure[]> {
  // The smoke run only proves the path: blocks four times as often, three of them measured.
  const DEVNET = devnet(options.smoke ? 250 : 1000);
  const p2pPort = await freePort();
  const producer = await startBenchNode([...DEVNET, `devnet.p2p_listen=127.0.0.1:${p2pPort}`], { readyTimeoutMs: 60_000 });
  const enode = formatEnode(nodeIdOf(devnetPeerKey('chain-data-node')), '127.0.0.1', p2pPort);
  const nodes: BenchNode[] = [producer];
  const streams: Array<{ close: () => void }> = [];
  try {
    const produced = follow(producer);
    streams.push(produced);
    const p2p = await startBenchNode(DEVNET, {
      toml: `[sources.live]\nkind = "p2p"\ntrusted_peers = ["${enode}"]\npoll_interval_ms = 1000\n[finality]\nkind = "devnet"\n`,
      readyTimeoutMs: 60_000,
    });
    nodes.push(p2p);
    const rpc = await startBenchNode(DEVNET, {
      toml: `[sources.live]\nkind = "rpc"\nurl = "${producer.rpcUrl}"\nws_url = "${producer.wsUrl}"\npoll_interval_ms = 1000\n[finality]\nkind = "rpc"\n`,
      readyTimeoutMs: 60_000,
    });
    nodes.push(rpc);
    const viaP2p = follow(p2p);
    const viaRpc = follow(rpc);
    streams.push(viaP2p, viaRpc);
    // Measure over blocks both followers saw produced after they were streaming: skip the first few (catch-up).
    const warm = produced.seen.size;
    const wanted = options.smoke ? 3 : Math.max(30, options.durationSeconds * options.rounds);
    await producer.waitFor(`${wanted} blocks announced and followed`, async () => {
      const fresh = [...produced.seen.keys()].slice(warm + 3);
      return fresh.length >= wanted && fresh.every((hash) => viaP2p.seen.has(hash) && viaRpc.seen.has(hash));
    }, wanted * 1000 + 120_000);
    const measured = new Map([...produced.seen].slice(warm + 3));
    const p2pLatency = latencies(measured, viaP2p.seen);
    const rpcLatency = latencies(measured, viaRpc.seen);
    const figure = (p: number): Figure => {
      const value = percentile(p2pLatency, p);
      const base = percentile(rpcLatency, p);
      return {
        name: `peer's announcement → change on the follower's /stream p${p} (p2p; baseline: rpc source with ws newHeads)`, unit: 'ms', better: 'lower',
        min: value, median: value, max: value,
        baseline: { name: 'rpc source, ws newHeads', min: base, median: base, max: base },
        ratio: { min: value / base, median: value / base, max: value / base },
      };
    };
    return [figure(50), figure(99), { name: 'blocks measured', unit: 'count', min: p2pLatency.length, median: p2pLatency.length, max: p2pLatency.length }];
  } finally {
    for (const stream of streams) stream.close();
    for (const node of nodes.reverse()) await node.stop();
  }
}

export const p2pLatencyWorkload: Workload = {
  name: 'p2p-latency',
  description: "a peer's block announcement → the change on a p2p follower's /stream (p50/p99), beside an rpc-source follower (ws newHeads) of the same producer",
  run,
};
