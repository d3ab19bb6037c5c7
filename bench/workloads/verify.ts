/**
 * Workload `verify`: the CPU a block's verification costs (`verifyBlockMaterialBytes`: hash, uncles, transactions /
 * withdrawals / receipts roots, bloom, gas) with each Keccak-256 implementation this machine has — the native addon's
 * (`native/keccak`: scalar, AVX2 4-lane, AVX-512 4- and 8-lane) and the WebAssembly fallback, which is how every
 * block was hashed before batching (one call per node) and what a machine without the addon runs. Measured on the
 * real mainnet blocks of `../shared/fixtures/mainnet-blocks` and on the first 256 blocks of the ingest bench's
 * mainnet-shaped devnet chain, implementations alternated round by round, as process CPU time (user + system) per
 * block on one thread: load on other cores inflates it far less than wall time. 1,000 / (ms/block) is the blocks/s
 * one core verifies.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { splitBlockRlp } from '../../net/eth/block-parts.js';
import { hexToBytes } from '../../net/eth/hex.js';
import { KECCAK_IMPLEMENTATIONS, keccakImplementation, useKeccakImplementation } from '../../net/eth/keccak-batch.js';
import { verifyBlockMaterialBytes, type BlockMaterialBytes } from '../../net/eth/verify-material.js';
import { cachedChain } from '../ingest/chain-cache.js';
import { readChainFile } from '../ingest/chain-file.js';
import { MAINNET_SHAPED_CHAIN, SMOKE_CHAIN } from '../ingest/chains.js';
import { compared, figure } from '../figures.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

const FALLBACK = 'wasm';
const DEVNET_BLOCKS = 256;

/** The mainnet fixture blocks (three `key: 0x…` lines each), or none when the fixtures are not beside the project. */
function mainnetFixtures(): BlockMaterialBytes[] {
  const dir = resolve('..', 'shared', 'fixtures', 'mainnet-blocks');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((file) => /^block-data-\d+\.yaml$/.test(file)).sort().map((file) => {
    const fields = new Map<string, Uint8Array>();
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const match = /^(\w+):\s*(0x[0-9a-fA-F]*)\s*$/.exec(line);
      if (match) fields.set(match[1]!, hexToBytes(match[2]!));
    }
    return { header: fields.get('header')!, body: fields.get('body')!, receipts: fields.get('receipts')! };
  });
}

async function devnetBlocks(smoke: boolean): Promise<BlockMaterialBytes[]> {
  const chain = await cachedChain(smoke ? SMOKE_CHAIN : MAINNET_SHAPED_CHAIN, (done) => {
    if (done % 64 === 0) process.stderr.write(`verify: generating the chain, block ${done}\n`);
  });
  const blocks: BlockMaterialBytes[] = [];
  for await (const record of readChainFile(chain.path)) {
    const parts = splitBlockRlp(record.block);
    blocks.push({ header: parts.header, body: parts.body, receipts: record.receipts });
    if (blocks.length === DEVNET_BLOCKS) break;
  }
  return blocks;
}

/** CPU ms per block verifying `blocks` at least `repeats` times and for at least 20 ms of CPU (after one untimed pass). */
function cpuPerBlock(blocks: readonly BlockMaterialBytes[], repeats: number): number {
  for (const block of blocks) verifyBlockMaterialBytes(block);
  const started = process.cpuUsage();
  let passes = 0;
  let micros = 0;
  while (passes < repeats || micros < 20_000) {
    for (const block of blocks) verifyBlockMaterialBytes(block);
    passes += 1;
    const cpu = process.cpuUsage(started);
    micros = cpu.user + cpu.system;
  }
  return micros / 1000 / (passes * blocks.length);
}

export const verifyWorkload: Workload = {
  name: 'verify',
  description: `CPU per block of verification (hash, roots, bloom) with each Keccak-256 implementation here (${KECCAK_IMPLEMENTATIONS.join(', ')}; the node uses ${keccakImplementation()}), mainnet fixtures and a mainnet-shaped devnet chain`,
  async run(options: WorkloadOptions): Promise<Figure[]> {
    const sets: [string, BlockMaterialBytes[], number][] = [];
    const fixtures = mainnetFixtures();
    if (fixtures.length > 0) sets.push(['mainnet fixtures', fixtures, options.smoke ? 1 : 30]);
    const devnet = await devnetBlocks(options.smoke);
    const shape = options.smoke ? SMOKE_CHAIN : MAINNET_SHAPED_CHAIN;
    sets.push([`devnet chain (${devnet.length} blocks of ${shape.devnet.transactionsPerBlock} txs)`, devnet, options.smoke ? 1 : 2]);
    const chosen = keccakImplementation();
    const perRound = new Map<string, number[]>();
    try {
      for (let round = 0; round < options.rounds; round++) {
        for (const [set, blocks, repeats] of sets) {
          for (const implementation of KECCAK_IMPLEMENTATIONS) {
            useKeccakImplementation(implementation);
            const key = `${set}\u0000${implementation}`;
            perRound.set(key, [...(perRound.get(key) ?? []), cpuPerBlock(blocks, repeats)]);
          }
        }
      }
    } finally {
      useKeccakImplementation(chosen);
    }
    const figures: Figure[] = [];
    for (const [set] of sets) {
      const fallback = perRound.get(`${set}\u0000${FALLBACK}`)!;
      for (const implementation of KECCAK_IMPLEMENTATIONS) {
        const values = perRound.get(`${set}\u0000${implementation}`)!;
        const name = `${set}: verify, ${implementation}${implementation === chosen ? ' (in use)' : ''}${implementation === FALLBACK ? ' (fallback; as before batching)' : ''}`;
        figures.push(implementation === FALLBACK
          ? figure(name, 'CPU ms/block', values, 'lower')
          : compared(name, 'CPU ms/block', values, { name: `${FALLBACK} fallback`, values: fallback }, 'lower'));
      }
      const inUse = perRound.get(`${set}\u0000${chosen}`)!;
      figures.push(figure(`${set}: blocks/s verified by one core (${chosen})`, 'blocks/s', inUse.map((ms) => 1000 / ms), 'higher'));
    }
    return figures;
  },
};
