/**
 * Workload `p2p`: blocks of the mainnet-shaped ingest chain (cached under `bench/cache/`) fetched over RLPx (eth/69)
 * from loopback peers serving it, through the peer lane's own acquisition code (headers after the head, bodies and
 * receipts in windows over the peer pool), each block verified whole (hash, roots, bloom, gas) on a task pool of
 * `runtime.pool_threads` workers, as the p2p source does. With 1 and with 4 peers: blocks/s, CPU ms per block of
 * the follower (this process: requests, framing, decoding and the verification pool) and of the serving peers
 * (their own process, `bench/load/p2p-peers.ts`, so a profile of either side is its own), and RSS of the follower
 * at the end of each pass. Nothing is written to a store: the figure is acquisition plus verification.
 */
import { createInterface } from 'node:readline';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import type { Hash } from '../../net/eth/hex.js';
import { acquireStep, type BlockRef, type HeadersAhead } from '../../net/p2p/acquire.js';
import { parseEnode } from '../../net/p2p/enode.js';
import { EthHost } from '../../net/p2p/host.js';
import { PeerPool } from '../../net/p2p/peer-pool.js';
import type { EthSession } from '../../net/p2p/session.js';
import { localStatus, refuseStatus, type ChainIdentity } from '../../net/p2p/status.js';
import { createTaskPool, type TaskPool } from '../../runtime/pool.js';
import { batchOutcomes, materialInput } from '../../actors/peers/verify-batch.js';
import type { BlockMaterialOutcome } from '../../actors/tasks.js';
import { trackChild } from '../leftovers.js';
import { exitOf, stopProcess, tailOutput } from '../load/spawn.js';
import { summarize } from '../stats.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';
import { loadChain, type ServedBlock } from './p2p-chain.js';

const TASKS_MODULE = fileURLToPath(new URL('../../actors/tasks.js', import.meta.url));
const PEERS_SCRIPT = fileURLToPath(new URL('../load/p2p-peers.js', import.meta.url));

interface PassResult { blocksPerSecond: number; cpuMsPerBlock: number; servingCpuMsPerBlock: number; rssMb: number }

/** Starts the serving peers' process (the same node flags as this one, so `--cpu-prof` profiles it too). */
async function startPeers(peers: number, smoke: boolean): Promise<{ enodes: string[]; send: (line: string) => void; next: () => Promise<string>; stop: () => Promise<void> }> {
  const child = trackChild(spawn(process.execPath, [...process.execArgv, PEERS_SCRIPT, String(peers), smoke ? '1' : '0'], { stdio: ['pipe', 'pipe', 'pipe'] }));
  const output = tailOutput(child);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    const line = await lines.next();
    if (line.done) throw new Error(`the serving peers' process ended: ${output.join(' | ')}`);
    return line.value;
  };
  const { enodes } = JSON.parse(await next()) as { enodes: string[] };
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
  return { enodes, send, next, stop };
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
    for (const enode of serving.enodes) await client.dial(parseEnode(enode));
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

export const p2pWorkload: Workload = {
  name: 'p2p',
  description: 'mainnet-shaped blocks fetched over RLPx (eth/69) from 1 and 4 loopback peers (their own process) with the peer lane\'s acquisition code, each verified whole on the task pool',
  async run(options: WorkloadOptions): Promise<Figure[]> {
    const { chain, blocks } = await loadChain(options.smoke);
    const pool = createTaskPool({ module: TASKS_MODULE, threads: options.config?.runtime.pool_threads ?? 2 });
    try {
      const figures: Figure[] = [];
      for (const peers of [1, 4]) {
        const rounds: PassResult[] = [];
        for (let round = 0; round < options.rounds; round++) rounds.push(await pass(chain, blocks, peers, pool, options.smoke));
        const label = `${peers} peer${peers === 1 ? '' : 's'}`;
        figures.push(
          { name: `blocks/s, ${label}`, unit: 'blocks/s', better: 'higher', ...summarize(rounds.map((r) => r.blocksPerSecond)) },
          { name: `CPU per block, follower, ${label}`, unit: 'ms', better: 'lower', ...summarize(rounds.map((r) => r.cpuMsPerBlock)) },
          { name: `CPU per block, serving peers, ${label}`, unit: 'ms', better: 'lower', ...summarize(rounds.map((r) => r.servingCpuMsPerBlock)) },
          { name: `RSS of the follower after the pass, ${label}`, unit: 'MB', better: 'lower', ...summarize(rounds.map((r) => r.rssMb)) },
        );
      }
      figures.push({ name: 'blocks per pass', unit: 'blocks', ...summarize([blocks.length - 1]) });
      return figures;
    } finally {
      await pool.destroy();
    }
  },
};
