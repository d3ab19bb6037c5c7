/**
 * Workload `p2p`: blocks of the mainnet-shaped ingest chain (cached under `bench/cache/`) fetched over RLPx (eth/69)
 * from loopback peers serving it, through the peer lane's own acquisition code (headers after the head, bodies and
 * receipts in windows over the peer pool), each block verified whole (hash, roots, bloom, gas) on a task pool of
 * `runtime.pool_threads` workers, as the p2p source does. With 1 and with 4 peers: blocks/s, CPU ms per block of
 * the follower (this process: requests, framing, decoding and the verification pool) and of the serving peers
 * (their own process, `bench/load/p2p-peers.ts`, so a profile of either side is its own), and RSS of the follower
 * at the end of each pass. Nothing is written to a store: the figure is acquisition plus verification.
 *
 * The baseline in the same run: the `rpc` source over the same chain. A JSON-RPC upstream in its own process
 * (`bench/load/p2p-rpc-upstream.ts`, node:http on loopback, the blocks rendered by the node's JSON-RPC renderers)
 * serves the same blocks, and this process fetches and verifies them with the rpc live source's own acquisition code
 * (`follow` of net/rpc/follow.ts: one `eth_getBlockByHash` + `eth_getBlockReceipts` batch a block, walking back by
 * parent hash, 64 blocks a call, each block converted from JSON and verified). Reported the same way: blocks/s, CPU
 * per block of the follower and of the upstream, RSS; and beside the 1-peer figures as their baseline.
 * `CDN_BENCH_P2P_RPC=0` leaves the baseline out (to profile the p2p passes alone).
 */
import { createInterface } from 'node:readline';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, type Hash } from '../../net/eth/hex.js';
import { acquireStep, type HeadersAhead } from '../../net/p2p/acquire.js';
import type { BlockRef } from '../../store/chain-types.js';
import { parseEnode } from '../../net/p2p/enode.js';
import { EthHost } from '../../net/p2p/host.js';
import { PeerPool } from '../../net/p2p/peer-pool.js';
import type { EthSession } from '../../net/p2p/session.js';
import { localStatus, refuseStatus, type ChainIdentity } from '../../net/p2p/status.js';
import { createRpcClient } from '../../net/rpc/client.js';
import { follow } from '../../net/rpc/follow.js';
import { createTaskPool, type TaskPool } from '../../runtime/pool.js';
import { batchOutcomes, materialInput } from '../../actors/peers/verify-batch.js';
import type { BlockMaterialOutcome } from '../../actors/node/tasks.js';
import { trackChild } from '../leftovers.js';
import { exitOf, stopProcess, tailOutput } from '../load/spawn.js';
import { compared } from '../figures.js';
import { summarize } from '../stats.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';
import { loadChain, type ServedBlock } from './p2p-chain.js';

const TASKS_MODULE = fileURLToPath(new URL('../../actors/node/tasks.js', import.meta.url));
const PEERS_SCRIPT = fileURLToPath(new URL('../load/p2p-peers.js', import.meta.url));
const UPSTREAM_SCRIPT = fileURLToPath(new URL('../load/p2p-rpc-upstream.js', import.meta.url));

interface PassResult { blocksPerSecond: number; cpuMsPerBlock: number; servingCpuMsPerBlock: number; rssMb: number }

interface Serving<Announce> { announced: Announce; send: (line: string) => void; next: () => Promise<string>; stop: () => Promise<void> }

/** Starts the serving peers' process (the same node flags as this one, so `--cpu-prof` profiles it too). */
async function startPeers(peers: number, smoke: boolean): Promise<Serving<{ enodes: string[] }>> {
  return startServing(PEERS_SCRIPT, [String(peers), smoke ? '1' : '0']);
}

/** Starts the JSON-RPC upstream's process (the same node flags as this one). */
async function startUpstream(smoke: boolean): Promise<Serving<{ url: string }>> {
  return startServing(UPSTREAM_SCRIPT, [smoke ? '1' : '0']);
}

/** A serving process that announces itself in one JSON line, then takes `start` / `stop` on standard input. */
async function startServing<Announce>(script: string, args: readonly string[]): Promise<Serving<Announce>> {
  const child = trackChild(spawn(process.execPath, [...process.execArgv, script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] }));
  const output = tailOutput(child);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    const line = await lines.next();
    if (line.done) throw new Error(`the serving peers' process ended: ${output.join(' | ')}`);
    return line.value;
  };
  let announced: Announce;
  try {
    announced = JSON.parse(await next()) as Announce;
  } catch (error) {
    await stopProcess(child, 5000);
    throw error;
  }
  child.stdin!.on('error', () => undefined);
  let stopSent = false;
  const send = (line: string) => {
    if (line === 'stop') stopSent = true;
    child.stdin!.write(`${line}\n`);
  };
  const stop = async () => {
    if (!stopSent && child.exitCode === null) send('stop');
    // After `stop` it exits by itself (writing its CPU profile when asked for one); a signal only if it does not.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exitOf(child), new Promise((resolve) => { timer = setTimeout(resolve, 10_000); })]);
    clearTimeout(timer);
    await stopProcess(child, 5000);
  };
  return { announced, send, next, stop };
}

async function pass(chain: ChainIdentity, blocks: readonly ServedBlock[], peers: number, pool: TaskPool, smoke: boolean): Promise<PassResult> {
  const tip = blocks[blocks.length - 1]!;
  const serving = await startPeers(peers, smoke);
  const client = new EthHost({
    privateKey: secp256k1.utils.randomSecretKey(), status: () => localStatus(chain, { number: 0, hash: chain.genesis.hash, timestamp: chain.genesis.timestamp, earliest: 0 }),
    checkStatus: (remote) => refuseStatus(chain, { number: 0, timestamp: chain.genesis.timestamp }, remote), handler: null, maxPeers: peers, handshakeTimeoutMs: 10_000, listen: null,
  });
  try {
    const peerPool = new PeerPool({ concurrency: 32, windowBlocks: 8, banMs: 60_000 });
    const sessions = new Promise<void>((resolve) => client.on('session', (session: EthSession) => {
      peerPool.add(session);
      if (peerPool.size === peers) resolve();
    }));
    for (const enode of serving.announced.enodes) await client.dial(parseEnode(enode));
    await sessions;
    const known = new Set<Hash>([chain.genesis.hash]);
    let local: BlockRef = { number: 0, hash: chain.genesis.hash };
    let ahead: HeadersAhead | null = null;
    serving.send('start');
    const cpu = process.cpuUsage();
    const started = performance.now();
    while (local.number < tip.number) {
      const step = await acquireStep({
        pool: peerPool, local, isKnown: (hash) => known.has(hash), maxReorgDepth: 64, timeoutMs: 30_000, maxHeaders: 192, ahead,
        verify: async (block) => {
          await pool.run('verifyBlockMaterial', materialInput(block));
        },
        verifyBatch: async (batch) => batchOutcomes(await pool.run<BlockMaterialOutcome[]>('verifyBlockMaterials', batch.map(materialInput))),
      });
      for (const block of step.branch) known.add(block.hash);
      local = step.head;
      ahead = step.ahead;
    }
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    serving.send('stop');
    const { cpuUs } = JSON.parse(await serving.next()) as { cpuUs: number };
    if (peerPool.counters.bans > 0) throw new Error('a loopback peer was banned: the served chain did not verify');
    return {
      blocksPerSecond: tip.number / seconds, cpuMsPerBlock: (used.user + used.system) / 1000 / tip.number, servingCpuMsPerBlock: cpuUs / 1000 / tip.number,
      rssMb: process.memoryUsage().rss / 1024 / 1024,
    };
  } finally {
    client.destroy();
    await serving.stop();
  }
}

/**
 * The baseline: the same chain from the JSON-RPC upstream (started once per run: it renders the whole chain first),
 * fetched and verified by the rpc live source's `follow`.
 */
async function rpcPass(chain: ChainIdentity, blocks: readonly ServedBlock[], upstream: Serving<{ url: string }>): Promise<PassResult> {
  const tip = blocks[blocks.length - 1]!;
  const shutdown = new AbortController();
  try {
    const client = createRpcClient({ url: upstream.announced.url, timeoutMs: 60_000, maxRetries: 0, backoffInitialMs: 100, backoffMaxMs: 1000, signal: shutdown.signal });
    const known = new Set<Hash>([chain.genesis.hash]);
    let local: BlockRef = { number: 0, hash: chain.genesis.hash };
    upstream.send('start');
    const cpu = process.cpuUsage();
    const started = performance.now();
    while (local.number < tip.number) {
      const result = await follow({ client, localHead: local, maxReorgDepth: 64, isKnown: (hash) => known.has(hash) });
      if (result.reorged) throw new Error(`the rpc follower saw a reorganisation at ${result.head.number} on a chain without any`);
      for (const block of result.branch) known.add(bytesToHex(block.material.hash));
      if (result.head.number <= local.number) throw new Error(`the rpc follower made no progress at ${local.number}`);
      local = result.head;
    }
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    upstream.send('report');
    const { cpuUs } = JSON.parse(await upstream.next()) as { cpuUs: number };
    return {
      blocksPerSecond: tip.number / seconds, cpuMsPerBlock: (used.user + used.system) / 1000 / tip.number, servingCpuMsPerBlock: cpuUs / 1000 / tip.number,
      rssMb: process.memoryUsage().rss / 1024 / 1024,
    };
  } finally {
    shutdown.abort(new Error('the rpc pass ended'));
  }
}

export const p2pWorkload: Workload = {
  name: 'p2p',
  description: 'mainnet-shaped blocks fetched over RLPx (eth/69) from 1 and 4 loopback peers (their own process) with the peer lane\'s acquisition code, each verified whole on the task pool; beside it the rpc source over the same chain from a loopback JSON-RPC upstream',
  async run(options: WorkloadOptions): Promise<Figure[]> {
    const { chain, blocks } = await loadChain(options.smoke);
    const pool = createTaskPool({ module: TASKS_MODULE, threads: options.config?.runtime.pool_threads ?? 2 });
    try {
      const figures: Figure[] = [];
      // Each round: 1 and 4 peers, then the rpc baseline (last, so its JSON garbage is not in the peers' RSS).
      const rpcRounds: PassResult[] = [];
      const withRpc = process.env.CDN_BENCH_P2P_RPC !== '0';
      const peerRounds = new Map<number, PassResult[]>([[1, []], [4, []]]);
      const upstream = withRpc ? await startUpstream(options.smoke) : null;
      try {
        for (let round = 0; round < options.rounds; round++) {
          for (const [peers, rounds] of peerRounds) rounds.push(await pass(chain, blocks, peers, pool, options.smoke));
          if (upstream) rpcRounds.push(await rpcPass(chain, blocks, upstream));
        }
      } finally {
        await upstream?.stop();
      }
      const baseline = (pick: (r: PassResult) => number) => ({ name: 'rpc source, JSON-RPC upstream on loopback, same chain', values: rpcRounds.map(pick) });
      for (const [peers, rounds] of peerRounds) {
        const label = `${peers} peer${peers === 1 ? '' : 's'}`;
        const perBlock = (r: PassResult) => r.cpuMsPerBlock;
        const rate = (r: PassResult) => r.blocksPerSecond;
        figures.push(
          peers === 1 && withRpc ? compared(`blocks/s, ${label}`, 'blocks/s', rounds.map(rate), baseline(rate), 'higher')
            : { name: `blocks/s, ${label}`, unit: 'blocks/s', better: 'higher', ...summarize(rounds.map(rate)) },
          peers === 1 && withRpc ? compared(`CPU per block, follower, ${label}`, 'ms', rounds.map(perBlock), baseline(perBlock), 'lower')
            : { name: `CPU per block, follower, ${label}`, unit: 'ms', better: 'lower', ...summarize(rounds.map(perBlock)) },
          { name: `CPU per block, serving peers, ${label}`, unit: 'ms', better: 'lower', ...summarize(rounds.map((r) => r.servingCpuMsPerBlock)) },
          { name: `RSS of the follower after the pass, ${label}`, unit: 'MB', better: 'lower', ...summarize(rounds.map((r) => r.rssMb)) },
        );
      }
      if (withRpc) figures.push(
        { name: 'blocks/s, rpc source', unit: 'blocks/s', better: 'higher', ...summarize(rpcRounds.map((r) => r.blocksPerSecond)) },
        { name: 'CPU per block, follower, rpc source', unit: 'ms', better: 'lower', ...summarize(rpcRounds.map((r) => r.cpuMsPerBlock)) },
        { name: 'CPU per block, serving upstream, rpc source', unit: 'ms', better: 'lower', ...summarize(rpcRounds.map((r) => r.servingCpuMsPerBlock)) },
        { name: 'RSS of the follower after the pass, rpc source', unit: 'MB', better: 'lower', ...summarize(rpcRounds.map((r) => r.rssMb)) },
      );
      figures.push({ name: 'blocks per pass', unit: 'blocks', ...summarize([blocks.length - 1]) });
      return figures;
    } finally {
      await pool.destroy();
    }
  },
};
