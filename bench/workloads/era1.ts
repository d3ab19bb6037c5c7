/**
 * Workload `era1`: the Era1 fixture (`../shared/fixtures/era1/mainnet-00000-5ec1ffb8.era1`, mainnet blocks
 * 0-8191) read, verified and recorded the way a materialization job takes it from a `kind = "era"` history source:
 * `fetchProvenChunk` over chunks of `[history] chunk_blocks` from the top of the file down, into a fresh store whose
 * recorded chain lies far above (so every chunk is anchored by the accumulator, not by a header walk). Each round
 * uses a new source and a new store, so the file's header pass (every header decoded and linked, total
 * difficulties, the accumulator root recomputed) is part of every round. Figures: blocks/s (wall) and process CPU
 * (user + system) per block over the whole file, and the header pass alone (ms per file). In-process, one thread
 * (the history lane's own); nothing else runs.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fetchProvenChunk } from '../../actors/history/anchor.js';
import { createHistorySource } from '../../actors/history/sources.js';
import { Era1File } from '../../net/era/era1-file.js';
import { verifyEpochHeaders } from '../../net/era/era1-verify.js';
import { mainnetEpochRoots } from '../../net/era/mainnet-epoch-roots.js';
import { encodeHeader, hashHeader, type BlockHeader } from '../../net/eth/header.js';
import { hexToBytes, type Hash } from '../../net/eth/hex.js';
import { putBlockMaterial } from '../../store/chain-material.js';
import { u64Key } from '../../store/keys.js';
import { openStore, type Store } from '../../store/store.js';
import { figure } from '../figures.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

const FIXTURE_DIR = resolve('..', 'shared', 'fixtures', 'era1');
const FIXTURE_NAME = 'mainnet-00000-5ec1ffb8.era1';
const BLOCKS = 8192;
const ZERO = `0x${'00'.repeat(32)}` as Hash;

/** A recorded chain of one synthetic block far above the file (a node that followed mainnet). */
async function recordChainAbove(store: Store, number: number): Promise<void> {
  const header: BlockHeader = {
    parentHash: ZERO, sha3Uncles: ZERO, miner: `0x${'00'.repeat(20)}`, stateRoot: ZERO, transactionsRoot: ZERO, receiptsRoot: ZERO,
    logsBloom: `0x${'00'.repeat(256)}`, difficulty: 0n, number, gasLimit: 30_000_000n, gasUsed: 0n, timestamp: 1_700_000_000, extraData: '0x', mixHash: ZERO,
    nonce: '0x0000000000000000',
  };
  const hash = hexToBytes(hashHeader(header));
  await store.write(() => {
    putBlockMaterial(store, { number, hash, header: encodeHeader(header), body: Uint8Array.of(0xc3, 0xc0, 0xc0, 0xc0), receipts: null });
    store.chain.canonical.put(u64Key(number), Buffer.from(hash));
  });
}

interface Round {
  readonly blocksPerSecond: number;
  readonly cpuMsPerBlock: number;
}

async function oneRound(chunkBlocks: number): Promise<Round> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cdn-bench-era1-'));
  const store = openStore({ dataDir, chainId: 1 });
  const signal = new AbortController().signal;
  const source = createHistorySource({
    id: 'era1', kind: 'era', concurrency: 1, url: '', path: FIXTURE_DIR, batchBlocks: 16, requestTimeoutMs: 10_000, maxRetries: 0,
    backoffInitialMs: 200, backoffMaxMs: 1000, pooledBlobRoots: false, encoding: 'auto',
  }, store, { signal, chainId: 1 });
  try {
    await recordChainAbove(store, 20_000_000);
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let to = BLOCKS - 1; to >= 0; to -= chunkBlocks) {
      await fetchProvenChunk(store, [source], { from: Math.max(0, to - chunkBlocks + 1), to }, { belowFallback: () => null, signal, stopping: () => false });
    }
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    return { blocksPerSecond: BLOCKS / seconds, cpuMsPerBlock: (used.user + used.system) / 1000 / BLOCKS };
  } finally {
    await source.close?.();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The header pass alone (one file): ms. */
async function headerPass(): Promise<number> {
  const file = await Era1File.open(join(FIXTURE_DIR, FIXTURE_NAME), FIXTURE_NAME);
  try {
    const started = performance.now();
    await verifyEpochHeaders(file, mainnetEpochRoots(), 0);
    return performance.now() - started;
  } finally {
    await file.close();
  }
}

export const era1Workload: Workload = {
  name: 'era1',
  description: 'the Era1 fixture (mainnet blocks 0-8191) read, verified and recorded as a job takes it from a kind "era" source: blocks/s, CPU per block, and the file\'s header pass',
  async run(options: WorkloadOptions): Promise<Figure[]> {
    if (!existsSync(join(FIXTURE_DIR, FIXTURE_NAME))) throw new Error(`the Era1 fixture is not at ${join(FIXTURE_DIR, FIXTURE_NAME)} (run from the project root, fixtures beside it)`);
    const chunkBlocks = options.config?.history.chunk_blocks ?? 256;
    const rounds = options.smoke ? 1 : Math.max(1, options.rounds);
    const throughput: number[] = [];
    const cpu: number[] = [];
    const pass: number[] = [];
    await headerPass(); // warm-up: module loading, the roots file, JIT
    for (let round = 0; round < rounds; round++) {
      const measured = await oneRound(chunkBlocks);
      throughput.push(measured.blocksPerSecond);
      cpu.push(measured.cpuMsPerBlock);
      pass.push(await headerPass());
    }
    return [
      figure(`Era1 fixture read, verified and recorded (chunks of ${chunkBlocks})`, 'blocks/s', throughput, 'higher'),
      figure('Era1 fixture read, verified and recorded: process CPU', 'CPU ms/block', cpu, 'lower'),
      figure('Era1 header pass (8192 headers decoded and linked, total difficulties, accumulator root)', 'ms/file', pass, 'lower'),
    ];
  },
};
