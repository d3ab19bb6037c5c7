/**
 * Workload `p2p`: blocks of the mainnet-shaped ingest chain (cached under `bench/cache/`) fetched over RLPx (eth/69)
 * from loopback peers serving it, through the peer lane's own acquisition code (headers after the head, bodies and
 * receipts in windows over the peer pool), each block verified whole (hash, roots, bloom, gas) on a task pool of
 * `runtime.pool_threads` workers, as the p2p source does. With 1 and with 4 peers: blocks/s, CPU ms per block of
 * this process (the peers run in it too, so this is the cost of both ends), and RSS at the end of each pass.
 * Nothing is written to a store: the figure is acquisition plus verification.
 */
import { fileURLToPath } from 'node:url';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { devnetForkSchedule, devnetGenesis } from '../../net/devnet/index.js';
import { decodeHeader, encodeHeader } from '../../net/eth/header.js';
import type { Hash } from '../../net/eth/hex.js';
import { keccak256Hex } from '../../net/eth/keccak.js';
import { rlpChildren, rlpWhole } from '../../net/eth/rlp-walk.js';
import { acquireStep, type BlockRef } from '../../net/p2p/acquire.js';
import { formatEnode, parseEnode } from '../../net/p2p/enode.js';
import { rawList } from '../../net/p2p/eth-messages.js';
import { EthHost } from '../../net/p2p/host.js';
import { PeerPool } from '../../net/p2p/peer-pool.js';
import { chainRequestHandler, type ChainReader } from '../../net/p2p/serve.js';
import type { EthSession } from '../../net/p2p/session.js';
import { localStatus, refuseStatus, type ChainIdentity } from '../../net/p2p/status.js';
import { createTaskPool, type TaskPool } from '../../runtime/pool.js';
import { cachedChain } from '../ingest/chain-cache.js';
import { readChainFile } from '../ingest/chain-file.js';
import { MAINNET_SHAPED_CHAIN, SMOKE_CHAIN } from '../ingest/chains.js';
import { summarize } from '../stats.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

const TASKS_MODULE = fileURLToPath(new URL('../../actors/tasks.js', import.meta.url));

interface ServedBlock {
  readonly number: number;
  readonly hash: Hash;
  readonly header: Uint8Array;
  readonly body: Uint8Array;
  readonly receipts: Uint8Array;
  readonly timestamp: number;
}

async function loadChain(smoke: boolean): Promise<{ chain: ChainIdentity; blocks: ServedBlock[] }> {
  const cached = await cachedChain(smoke ? SMOKE_CHAIN : MAINNET_SHAPED_CHAIN);
  const genesis = devnetGenesis(cached.config);
  const genesisHeader = encodeHeader(genesis.header);
  const blocks: ServedBlock[] = [{ number: 0, hash: genesis.hash, header: genesisHeader, body: rawList([rawList([]), rawList([]), rawList([])]), receipts: rawList([]), timestamp: genesis.header.timestamp }];
  for await (const record of readChainFile(cached.path)) {
    const [header, ...rest] = rlpChildren(record.block, rlpWhole(record.block, 'bench block'), 'bench block');
    const headerBytes = record.block.slice(header!.offset, header!.end);
    const decoded = decodeHeader(headerBytes);
    blocks.push({ number: decoded.number, hash: keccak256Hex(headerBytes), header: headerBytes, body: rawList(rest.map((s) => record.block.subarray(s.offset, s.end))), receipts: record.receipts, timestamp: decoded.timestamp });
  }
  return { chain: { chainId: cached.config.chainId, schedule: devnetForkSchedule(cached.config), genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } }, blocks };
}

function readerOf(blocks: readonly ServedBlock[]): ChainReader {
  const byHash = new Map(blocks.map((block) => [block.hash, block]));
  return {
    canonicalHeader: (number) => blocks[number]?.header,
    numberOf: (hash) => byHash.get(hash)?.number,
    headerByHash: (hash) => byHash.get(hash)?.header,
    bodyByHash: (hash) => byHash.get(hash)?.body,
    receiptsByHash: (hash) => byHash.get(hash)?.receipts,
  };
}

async function pass(chain: ChainIdentity, blocks: readonly ServedBlock[], peers: number, pool: TaskPool): Promise<{ blocksPerSecond: number; cpuMsPerBlock: number; rssMb: number }> {
  const reader = readerOf(blocks);
  const tip = blocks[blocks.length - 1]!;
  const hosts: EthHost[] = [];
  try {
    const enodes: string[] = [];
    for (let i = 0; i < peers; i++) {
      const host = new EthHost({
        privateKey: secp256k1.utils.randomSecretKey(), status: () => localStatus(chain, { number: tip.number, hash: tip.hash, timestamp: tip.timestamp, earliest: 0 }),
        checkStatus: (remote) => refuseStatus(chain, tip, remote), handler: chainRequestHandler(reader), maxPeers: 4, handshakeTimeoutMs: 10_000, listen: { host: '127.0.0.1', port: 0 },
      });
      hosts.push(host);
      enodes.push(formatEnode(host.id, '127.0.0.1', await host.port()));
    }
    const client = new EthHost({
      privateKey: secp256k1.utils.randomSecretKey(), status: () => localStatus(chain, { number: 0, hash: chain.genesis.hash, timestamp: chain.genesis.timestamp, earliest: 0 }),
      checkStatus: (remote) => refuseStatus(chain, { number: 0, timestamp: chain.genesis.timestamp }, remote), handler: null, maxPeers: peers, handshakeTimeoutMs: 10_000, listen: null,
    });
    hosts.push(client);
    const peerPool = new PeerPool({ concurrency: 32, windowBlocks: 8, banMs: 60_000 });
    const sessions = new Promise<void>((resolve) => client.on('session', (session: EthSession) => {
      peerPool.add(session);
      if (peerPool.size === peers) resolve();
    }));
    for (const enode of enodes) await client.dial(parseEnode(enode));
    await sessions;
    const known = new Set<Hash>([chain.genesis.hash]);
    let local: BlockRef = { number: 0, hash: chain.genesis.hash };
    const cpu = process.cpuUsage();
    const started = performance.now();
    while (local.number < tip.number) {
      const step = await acquireStep({
        pool: peerPool, local, isKnown: (hash) => known.has(hash), maxReorgDepth: 64, timeoutMs: 30_000, maxHeaders: 192,
        verify: async (block) => {
          await pool.run('verifyBlockMaterial', { header: block.header, body: block.body, ...(block.receipts ? { receipts: block.receipts } : {}), expectedHash: block.hash });
        },
      });
      for (const block of step.branch) known.add(block.hash);
      local = step.head;
    }
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    if (peerPool.counters.bans > 0) throw new Error('a loopback peer was banned: the served chain did not verify');
    return { blocksPerSecond: tip.number / seconds, cpuMsPerBlock: (used.user + used.system) / 1000 / tip.number, rssMb: process.memoryUsage().rss / 1024 / 1024 };
  } finally {
    for (const host of hosts) host.destroy();
  }
}

export const p2pWorkload: Workload = {
  name: 'p2p',
  description: 'mainnet-shaped blocks fetched over RLPx (eth/69) from 1 and 4 loopback peers with the peer lane\'s acquisition code, each verified whole on the task pool',
  async run(options: WorkloadOptions): Promise<Figure[]> {
    const { chain, blocks } = await loadChain(options.smoke);
    const pool = createTaskPool({ module: TASKS_MODULE, threads: options.config?.runtime.pool_threads ?? 2 });
    try {
      const figures: Figure[] = [];
      for (const peers of [1, 4]) {
        const rounds: { blocksPerSecond: number; cpuMsPerBlock: number; rssMb: number }[] = [];
        for (let round = 0; round < options.rounds; round++) rounds.push(await pass(chain, blocks, peers, pool));
        const label = `${peers} peer${peers === 1 ? '' : 's'}`;
        figures.push(
          { name: `blocks/s, ${label}`, unit: 'blocks/s', better: 'higher', ...summarize(rounds.map((r) => r.blocksPerSecond)) },
          { name: `CPU per block, ${label}`, unit: 'ms', better: 'lower', ...summarize(rounds.map((r) => r.cpuMsPerBlock)) },
          { name: `RSS after the pass, ${label}`, unit: 'MB', better: 'lower', ...summarize(rounds.map((r) => r.rssMb)) },
        );
      }
      figures.push({ name: 'blocks per pass', unit: 'blocks', ...summarize([blocks.length - 1]) });
      return figures;
    } finally {
      await pool.destroy();
    }
  },
};
