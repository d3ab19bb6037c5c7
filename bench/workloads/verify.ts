/**
 * Workload `verify`: the CPU a block's verification costs (`verifyBlockMaterialBytes`: hash, uncles, transactions /
 * withdrawals / receipts roots, bloom, gas) with each Keccak-256 implementation this machine has — the native addon's
 * (`native/keccak`: scalar, AVX2 4-lane, AVX-512 4- and 8-lane) and the WebAssembly fallback, which is how every
 * block was hashed before batching (one call per node) and what a machine without the addon runs. Measured on the
 * real mainnet blocks of `../shared/fixtures/mainnet-blocks` and on the first 256 blocks of the ingest bench's
 * mainnet-shaped devnet chain, implementations alternated round by round, as process CPU time (user + system) per
 * block on one thread: load on other cores inflates it far less than wall time. 1,000 / (ms/block) is the blocks/s
 * one core verifies.
 *
 * Also, on the mainnet fixtures rendered as an upstream answers them (`eth_getBlockByNumber(n, true)` and
 * `eth_getBlockReceipts(n)`, by the node's own JSON-RPC renderers): CPU per block of turning the parsed JSON into
 * verified material (what an `rpc` history source does per block), the history lane's path before the CPU pool took
 * it (`materialFromJson`: decode, verify the objects, encode), the pool's before the direct writer (decode into
 * objects, encode, verify the bytes) and the pool's now (`verifiedMaterialFromJson`: the JSON written straight into
 * RLP, verify the bytes), alternated round by round.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { splitBlockRlp } from '../../net/eth/block-parts.js';
import { hexToBytes } from '../../net/eth/hex.js';
import { decodeHeader } from '../../net/eth/header.js';
import { KECCAK_IMPLEMENTATIONS, keccakImplementation, useKeccakImplementation } from '../../net/eth/keccak-batch.js';
import { verifyBlockMaterialBytes, type BlockMaterialBytes } from '../../net/eth/verify-material.js';
import { cachedChain } from '../ingest/chain-cache.js';
import { readChainFile } from '../ingest/chain-file.js';
import { MAINNET_SHAPED_CHAIN, SMOKE_CHAIN } from '../ingest/chains.js';
import { compared, figure } from '../figures.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';
import { BlockView } from '../../api/rpc/block-view.js';
import { renderBlock } from '../../api/rpc/render-block.js';
import { blockReceipts } from '../../api/rpc/render-receipt.js';
import { MAINNET_SCHEDULE } from '../../net/eth/fork-schedule.js';
import { keccak256 } from '../../net/eth/keccak.js';
import { headerFromJson, materialFromJson, receiptFromJson, transactionFromJson, verifiedMaterialFromJson, withdrawalFromJson } from '../../net/rpc/convert.js';
import { encodeBlockBody } from '../../net/eth/block.js';
import { encodeHeader } from '../../net/eth/header.js';
import { encodeEth69Receipts } from '../../net/eth/receipt.js';

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

interface JsonBlock {
  readonly block: unknown;
  readonly receipts: unknown[];
}

/** Each fixture block as an upstream's JSON-RPC answers it, parsed. */
function jsonAnswers(blocks: readonly BlockMaterialBytes[]): JsonBlock[] {
  return blocks.map((material) => {
    const header = decodeHeader(material.header);
    const view = new BlockView({ hash: keccak256(material.header), number: header.number, header: material.header, body: material.body, receipts: material.receipts ?? undefined });
    return { block: JSON.parse(renderBlock(view, true).toString()), receipts: JSON.parse(`[${blockReceipts(view, MAINNET_SCHEDULE)!.join(',')}]`) as unknown[] };
  });
}

/** CPU ms per block of `convert` over `blocks`, as `cpuPerBlock`. */
async function conversionCpuPerBlock(blocks: readonly JsonBlock[], repeats: number, convert: (block: JsonBlock) => unknown): Promise<number> {
  for (const block of blocks) await convert(block);
  const started = process.cpuUsage();
  let passes = 0;
  let micros = 0;
  while (passes < repeats || micros < 20_000) {
    for (const block of blocks) await convert(block);
    passes += 1;
    const cpu = process.cpuUsage(started);
    micros = cpu.user + cpu.system;
  }
  return micros / 1000 / (passes * blocks.length);
}

const LANE_PATH = 'history lane before: materialFromJson (verify objects, then encode)';
const OBJECTS_PATH = 'CPU pool path before: JSON → objects → encode, then verify the bytes';

/** The pool's conversion before the direct writer: the JSON decoded into objects, encoded, and the bytes verified. */
function objectsThenBytes(block: unknown, receipts: readonly unknown[]): void {
  const json = block as { hash: string; transactions: unknown[]; withdrawals?: unknown[] };
  const header = headerFromJson(block);
  const transactions = json.transactions.map((tx, i) => transactionFromJson(tx, i));
  const withdrawals = json.withdrawals?.map(withdrawalFromJson);
  const body = encodeBlockBody({ transactions, uncles: [], ...(withdrawals === undefined ? {} : { withdrawals }) });
  const encodedReceipts = encodeEth69Receipts(receipts.map((receipt, i) => receiptFromJson(receipt, i, false)));
  verifyBlockMaterialBytes({ header: encodeHeader(header), body, receipts: encodedReceipts, expectedHash: json.hash.toLowerCase() as `0x${string}` });
}

export const verifyWorkload: Workload = {
  name: 'verify',
  description: `CPU per block of verification (hash, roots, bloom) with each Keccak-256 implementation here (${KECCAK_IMPLEMENTATIONS.join(', ')}; the node uses ${keccakImplementation()}), mainnet fixtures and a mainnet-shaped devnet chain`,
  async run(options: WorkloadOptions): Promise<Figure[]> {
    const sets: [string, BlockMaterialBytes[], number][] = [];
    const fixtures = mainnetFixtures();
    if (fixtures.length > 0) sets.push(['mainnet fixtures', fixtures, options.smoke ? 1 : 30]);
    // CDN_BENCH_VERIFY_DEVNET=0: the fixtures only (the devnet chain takes minutes to generate when not cached).
    if (process.env.CDN_BENCH_VERIFY_DEVNET !== '0') {
      const devnet = await devnetBlocks(options.smoke);
      const shape = options.smoke ? SMOKE_CHAIN : MAINNET_SHAPED_CHAIN;
      sets.push([`devnet chain (${devnet.length} blocks of ${shape.devnet.transactionsPerBlock} txs)`, devnet, options.smoke ? 1 : 2]);
    }
    const chosen = keccakImplementation();
    const perRound = new Map<string, number[]>();
    const answers = fixtures.length > 0 ? jsonAnswers(fixtures) : [];
    const lane: number[] = [];
    const pool: number[] = [];
    const objects: number[] = [];
    for (let round = 0; round < options.rounds && answers.length > 0; round++) {
      const repeats = options.smoke ? 1 : 20;
      const laneFirst = round % 2 === 0;
      if (laneFirst) lane.push(await conversionCpuPerBlock(answers, repeats, (b) => materialFromJson(b.block, b.receipts)));
      if (laneFirst) objects.push(await conversionCpuPerBlock(answers, repeats, (b) => objectsThenBytes(b.block, b.receipts)));
      pool.push(await conversionCpuPerBlock(answers, repeats, (b) => verifiedMaterialFromJson(b.block, b.receipts)));
      if (!laneFirst) objects.push(await conversionCpuPerBlock(answers, repeats, (b) => objectsThenBytes(b.block, b.receipts)));
      if (!laneFirst) lane.push(await conversionCpuPerBlock(answers, repeats, (b) => materialFromJson(b.block, b.receipts)));
    }
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
    if (answers.length > 0) {
      const name = 'JSON-RPC answers of the mainnet fixtures → verified material: CPU pool path, verifiedMaterialFromJson (JSON written straight into RLP, then the bytes verified)';
      figures.push(compared(name, 'CPU ms/block', pool, { name: OBJECTS_PATH, values: objects }, 'lower'));
      figures.push(compared(`${name}, against the lane's path`, 'CPU ms/block', pool, { name: LANE_PATH, values: lane }, 'lower'));
    }
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
