/**
 * erc20: the ERC-20 balances kind over a pre-generated chain with mainnet's density of token
 * transfers (400 `Transfer` logs per block over 64 tokens and 200,000 holders, skewed towards a few
 * hot tokens and holders), through the processor lane's own commit path — material read from LMDB and
 * decoded, map, reduce through the recording state API, change envelopes rendered and written, coverage
 * and position — in batches of 256 journal moves, with finality trailing by 64 blocks (inverses
 * dropped, rows re-marked). Reports Transfer events/s (per wall second and per CPU second of the process:
 * the machine is shared), blocks/s, RSS and anonymous RSS over the range.
 *
 * `CDN_BENCH_ERC20_BATCH_MOVES` changes the moves per commit (default 256, the node's): fewer moves hold
 * fewer LMDB dirty pages (lower anonymous RSS) at more CPU per event.
 *
 * What it does not include: the chain lane's verification of the material (the ingest workload
 * measures that), and Ponder side by side (not run here).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashHeader, encodeHeader, encodeBlockBody, encodeEth69Receipts, type BlockHeader, type Hash, type Receipt } from '../../net/eth/index.js';
import { devnetForkSchedule, devnetGenesis, resolveDevnetConfig } from '../../net/devnet/index.js';
import { putBlockMaterial } from '../../store/chain-material.js';
import { openStore, type Store } from '../../store/store.js';
import { encodeJournalMove } from '../../store/journal.js';
import { u64Key } from '../../store/keys.js';
import { commitMoves, readMoves, type CommitContext } from '../../actors/processor/commit.js';
import { kindContext } from '../../actors/kinds/sdk/kind-context.js';
import erc20 from '../../actors/kinds/erc20/index.js';
import { TRANSFER_TOPIC } from '../../actors/kinds/erc20/transfers.js';
import { figure } from '../figures.js';
import { trackDirectory } from '../leftovers.js';
import type { Figure, Workload } from '../workload.js';

const FULL = { blocks: 1000 };
const SMOKE = { blocks: 40 };
const LOGS_PER_BLOCK = 400;
const LOGS_PER_RECEIPT = 4;
const TOKENS = 64;
const HOLDERS = 200_000;
const FINALITY_LAG = 64;
/** Journal moves per commit, as the node's processor lanes take them (actors/node/lanes.ts). */
const BATCH_MOVES = Number(process.env.CDN_BENCH_ERC20_BATCH_MOVES ?? 256);
const CHAIN_ID = 1;

/** Deterministic xorshift32. */
export function generator(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x / 4294967296;
  };
}

const word = (value: bigint) => value.toString(16).padStart(64, '0');
const addressOf = (kind: number, index: number) => `0x${kind.toString(16).padStart(8, '0')}${index.toString(16).padStart(32, '0')}` as const;
/** A skewed pick: most transfers touch few tokens and holders, as on mainnet. */
const skewed = (next: () => number, size: number) => Math.min(size - 1, Math.floor(size * next() ** 3));

function transferReceipts(next: () => number): Receipt[] {
  const receipts: Receipt[] = [];
  for (let r = 0; r < LOGS_PER_BLOCK / LOGS_PER_RECEIPT; r += 1) {
    const logs = Array.from({ length: LOGS_PER_RECEIPT }, () => ({
      address: addressOf(1, skewed(next, TOKENS)),
      topics: [TRANSFER_TOPIC, `0x${word(BigInt(addressOf(2, skewed(next, HOLDERS))))}`, `0x${word(BigInt(addressOf(2, skewed(next, HOLDERS))))}`] as Hash[],
      data: `0x${word(BigInt(Math.floor(next() * 1e12)) * 1_000_000n)}` as const,
    }));
    receipts.push({ type: 'eip1559', status: 'success', cumulativeGasUsed: BigInt((r + 1) * 60_000), logsBloom: `0x${'00'.repeat(256)}`, logs });
  }
  return receipts;
}

/** Writes the chain's material and its journal (applies, finality trailing) into a fresh store. */
async function generateChain(store: Store, blocks: number): Promise<number> {
  const genesis = devnetGenesis(resolveDevnetConfig()).header;
  const next = generator(20_260_124);
  let parentHash = hashHeader(genesis);
  let sequence = 0;
  const body = encodeBlockBody({ transactions: [], uncles: [], withdrawals: [] });
  for (let start = 1; start <= blocks; start += 100) {
    await store.write(() => {
      for (let number = start; number < Math.min(start + 100, blocks + 1); number += 1) {
        const header: BlockHeader = { ...genesis, number, parentHash, timestamp: genesis.timestamp + number * 12 };
        const hash = hashHeader(header);
        const receipts = encodeEth69Receipts(transferReceipts(next));
        putBlockMaterial(store, { number, hash: Buffer.from(hash.slice(2), 'hex'), header: encodeHeader(header), body, receipts });
        store.chain.journal.put(u64Key(++sequence), encodeJournalMove({ op: 'apply', number, hash: Buffer.from(hash.slice(2), 'hex') }));
        if (number > FINALITY_LAG) {
          const finalHash = store.chain.canonical.get(u64Key(number - FINALITY_LAG));
          if (finalHash) store.chain.journal.put(u64Key(++sequence), encodeJournalMove({ op: 'finalize', number: number - FINALITY_LAG, hash: Buffer.from(finalHash) }));
        }
        store.chain.canonical.put(u64Key(number), Buffer.from(hash.slice(2), 'hex'));
        parentHash = hash;
      }
    });
  }
  return sequence;
}

/**
 * The process's anonymous resident memory (heap, buffers, LMDB's dirty pages) from /proc/self/status,
 * or null where there is none. RSS also counts the store's file pages the memory map has touched: the
 * kernel reclaims those under pressure, and they grow with the file however the lane is written.
 */
function anonymousRss(): number | null {
  try {
    const match = /^RssAnon:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

const maxOf = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : Math.max(a, b));

/** A new erc20 instance's commit context over `store` (the devnet's schedule and genesis; erc20 reads neither). */
function benchContext(store: Store, instance: string, tokens: string | readonly string[], chainId: number): CommitContext {
  const config = resolveDevnetConfig();
  const genesis = devnetGenesis(config);
  const tables = store.processor(instance);
  return {
    store, tables, kind: erc20.bind({ tokens }), changeSchema: erc20.changeSchema, needs: erc20.needs, ordering: erc20.ordering, checkpoints: { everyBlocks: 0, retained: 1 },
    kindContext: kindContext(tables, { network: 'bench', schedule: devnetForkSchedule(config), genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } }),
    instance, chainId, startBlock: null,
  };
}

export interface JournalRun {
  readonly seconds: number;
  readonly cpuSeconds: number;
  /** The highest resident set size seen, and the anonymous part of it (null where /proc has none). */
  readonly maxRss: number;
  readonly maxAnon: number | null;
}

/**
 * Runs a new erc20 instance over every journal move of `store` through the processor lane's own commit
 * path (read, decode, map, reduce, commit; batches of BATCH_MOVES), timing it in wall and CPU seconds
 * of this process.
 */
export async function reduceJournal(store: Store, instance: string, tokens: string | readonly string[], chainId: number): Promise<JournalRun> {
  const ctx = benchContext(store, instance, tokens, chainId);
  let journalHead = 0;
  for (const key of store.chain.journal.getKeys({ reverse: true, limit: 1 })) journalHead = Number((key as Buffer).readBigUInt64BE(0));
  let maxRss = process.memoryUsage().rss;
  let maxAnon = anonymousRss();
  let position = 0;
  const started = performance.now();
  const startedCpu = process.cpuUsage();
  while (position < journalHead) {
    const moves = readMoves(store, position, BATCH_MOVES);
    const result = await commitMoves(ctx, moves, '2026-01-01T00:00:00.000Z');
    position = result.progress.journalSequence;
    maxRss = Math.max(maxRss, process.memoryUsage().rss);
    maxAnon = maxOf(maxAnon, anonymousRss());
  }
  const cpu = process.cpuUsage(startedCpu);
  return { seconds: (performance.now() - started) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6, maxRss, maxAnon };
}

export const erc20Workload: Workload = {
  name: 'erc20',
  description: `ERC-20 balances kind: ${LOGS_PER_BLOCK} Transfer logs per block through read, decode, map, reduce and commit (batches of ${BATCH_MOVES} moves)`,
  async run(options) {
    const size = options.smoke ? SMOKE : FULL;
    const dataDir = mkdtempSync(join(tmpdir(), 'cdn-bench-erc20-'));
    const removeDataDir = trackDirectory(dataDir);
    const store = openStore({ dataDir, chainId: CHAIN_ID });
    try {
      await generateChain(store, size.blocks);
      const eventsPerSecond: number[] = [];
      const blocksPerSecond: number[] = [];
      const rssStart: number[] = [];
      const rssEnd: number[] = [];
      const rssMax: number[] = [];
      const eventsPerCpuSecond: number[] = [];
      const anonStart: number[] = [];
      const anonMax: number[] = [];
      for (let round = 0; round < Math.max(1, options.rounds); round += 1) {
        global.gc?.();
        const startRss = process.memoryUsage().rss;
        const startAnon = anonymousRss();
        const run = await reduceJournal(store, `erc20-bench-${round}`, '*', CHAIN_ID);
        const { seconds, cpuSeconds, maxRss, maxAnon } = run;
        eventsPerSecond.push((size.blocks * LOGS_PER_BLOCK) / seconds);
        eventsPerCpuSecond.push((size.blocks * LOGS_PER_BLOCK) / cpuSeconds);
        blocksPerSecond.push(size.blocks / seconds);
        rssStart.push(startRss / 2 ** 20);
        rssEnd.push(process.memoryUsage().rss / 2 ** 20);
        rssMax.push(maxRss / 2 ** 20);
        if (startAnon !== null && maxAnon !== null) {
          anonStart.push(startAnon / 2 ** 20);
          anonMax.push(maxAnon / 2 ** 20);
        }
      }
      return [
        figure('Transfer events/s', 'events/s', eventsPerSecond, 'higher'),
        figure('Transfer events per CPU second', 'events/s', eventsPerCpuSecond, 'higher'),
        figure('blocks/s', 'blocks/s', blocksPerSecond, 'higher'),
        figure('RSS at start', 'MiB', rssStart),
        figure('RSS at end', 'MiB', rssEnd),
        figure('RSS max', 'MiB', rssMax, 'lower'),
        ...(anonMax.length > 0 ? [figure('anonymous RSS at start', 'MiB', anonStart), figure('anonymous RSS max', 'MiB', anonMax, 'lower')] : []),
        figure('blocks', 'blocks', [size.blocks]),
      ];
    } finally {
      await store.close();
      removeDataDir();
    }
  },
};
