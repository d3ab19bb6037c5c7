/**
 * The p2p history path without a node around it and without processors (the backfill workload's
 * `CDN_BENCH_BACKFILL_SOURCE=p2p`, issue 31's "fetch + verify + record without processors"): this process dials the
 * serving peers, and blocks 1..N are fetched with net/p2p/history-range.ts (headers by number, linked; bodies and
 * receipts in windows over the pool's history budget) in pieces of `batch` blocks, `concurrency` pieces in flight (as
 * the p2p history source asks the peers lane), every block verified whole on a task pool of `threads` workers (the
 * node's `verifyBlockMaterials` task), and recorded in a fresh store's chain tables in one write transaction per
 * piece. Reported: blocks/s, this process's CPU per block (all its threads: requests, framing, decoding, the
 * verification pool, LMDB writes), the serving peers' CPU per block, and RSS at the end.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { batchOutcomes, materialInput } from '../../actors/peers/verify-batch.js';
import type { BlockMaterialOutcome } from '../../actors/node/tasks.js';
import { hexToBytes } from '../../net/eth/hex.js';
import type { AcquiredBlock } from '../../net/p2p/acquire.js';
import { parseEnode } from '../../net/p2p/enode.js';
import { fetchHistoryRange } from '../../net/p2p/history-range.js';
import { EthHost } from '../../net/p2p/host.js';
import { PeerPool } from '../../net/p2p/peer-pool.js';
import type { EthSession } from '../../net/p2p/session.js';
import { localStatus, refuseStatus, type ChainIdentity } from '../../net/p2p/status.js';
import { createTaskPool } from '../../runtime/pool.js';
import { putBlockMaterial } from '../../store/chain-material.js';
import { openStore } from '../../store/store.js';
import { trackDirectory } from '../leftovers.js';
import { cpuSeconds } from '../load/process-cpu.js';

const TASKS_MODULE = fileURLToPath(new URL('../../actors/node/tasks.js', import.meta.url));

export interface PassShape { readonly batch: number; readonly concurrency: number; readonly threads: number }
export interface PassResult { readonly blocks: number; readonly blocksPerSecond: number; readonly cpuMsPerBlock: number; readonly servingCpuMsPerBlock: number; readonly rssMiB: number; readonly anonMiB: number }

export async function historyPass(chain: ChainIdentity, tip: number, enodes: readonly string[], servingPids: readonly number[], shape: PassShape): Promise<PassResult> {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-bench-history-pass-'));
  const remove = trackDirectory(dir);
  const store = openStore({ dataDir: dir, chainId: chain.chainId });
  const tasks = createTaskPool({ module: TASKS_MODULE, threads: shape.threads });
  const client = new EthHost({
    privateKey: secp256k1.utils.randomSecretKey(), status: () => localStatus(chain, { number: 0, hash: chain.genesis.hash, timestamp: chain.genesis.timestamp, earliest: 0 }),
    checkStatus: (remote) => refuseStatus(chain, { number: 0, timestamp: chain.genesis.timestamp }, remote), handler: null, maxPeers: enodes.length, handshakeTimeoutMs: 10_000, listen: null,
  });
  try {
    // The node's defaults: material_request_concurrency 32, material_request_blocks 8 (history: half the ceiling).
    const pool = new PeerPool({ concurrency: 32, windowBlocks: 8, banMs: 60_000 });
    const connected = new Promise<void>((resolve) => client.on('session', (session: EthSession) => {
      pool.add(session);
      if (pool.size === enodes.length) resolve();
    }));
    for (const enode of enodes) await client.dial(parseEnode(enode));
    await connected;
    const options = {
      pool, timeoutMs: 30_000,
      verifyBatch: async (blocks: readonly AcquiredBlock[]) => batchOutcomes(await tasks.run<BlockMaterialOutcome[]>('verifyBlockMaterials', blocks.map(materialInput))),
    };
    const serving = () => servingPids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const servingAtStart = serving();
    const cpu = process.cpuUsage();
    const started = performance.now();
    let next = 1;
    const worker = async () => {
      while (next <= tip) {
        const from = next;
        const to = Math.min(tip, from + shape.batch - 1);
        next = to + 1;
        const blocks = await fetchHistoryRange(options, from, to, true);
        await store.write(() => {
          for (const block of blocks) putBlockMaterial(store, { number: block.number, hash: hexToBytes(block.hash, 32), header: block.header, body: block.body, receipts: block.receipts });
        });
      }
    };
    await Promise.all(Array.from({ length: shape.concurrency }, worker));
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    if (pool.counters.bans > 0) throw new Error('a loopback peer was banned: the served chain did not verify');
    return {
      blocks: tip, blocksPerSecond: tip / seconds, cpuMsPerBlock: (used.user + used.system) / 1000 / tip,
      servingCpuMsPerBlock: ((serving() - servingAtStart) * 1000) / tip, rssMiB: process.memoryUsage().rss / 1024 / 1024,
      // Anonymous memory only (heaps, buffers): RSS also counts the pass store's memory-mapped pages, which grow
      // with the blocks recorded.
      anonMiB: Number(/^RssAnon:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024,
    };
  } finally {
    client.destroy();
    await tasks.destroy();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    remove();
  }
}
