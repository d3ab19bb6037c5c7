/**
 * Workload `ponder`: ERC-20 balances over one devnet chain with mainnet's density of token transfers
 * (`devnet.transactions_per_block` 200: ~250 `Transfer` logs per block over the devnet's three
 * tokens), computed two ways in the same run, over the same blocks:
 *   - the node's `erc20` kind: a new instance over the node's stored journal, through the processor
 *     lane's own commit path (material read from LMDB and decoded, map, reduce, change records,
 *     coverage), run in the bench process while the node is stopped (bench/workloads/erc20.ts
 *     `reduceJournal`); the chain was verified once when the node recorded it;
 *   - Ponder 0.16 (the newest release for Node 20; embedded PGlite), indexing the same Transfers into
 *     per-holder balances from the node's own JSON-RPC (`eth_getLogs`, blocks), its backfill time
 *     taken from its own log lines (start-up and PGlite's initialisation excluded).
 * Reports Transfer events/s of each (Ponder as the baseline, the ratio node ÷ Ponder), the node's
 * events per CPU second, and the events counted. Ponder runs while the devnet keeps making blocks.
 * `CDN_BENCH_PONDER_BLOCKS` changes the chain length (default 300).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compared, figure } from '../figures.js';
import { trackDirectory } from '../leftovers.js';
import { rpc, startBenchNode, type BenchNode } from '../node.js';
import { reduceJournal, type JournalRun } from './erc20.js';
import { openStore } from '../../store/store.js';
import { ponderMissing, startPonder } from '../load/ponder-process.js';
import type { Figure, Workload } from '../workload.js';

const TOKENS = ['0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506', '0xc9bbd8575d55bf87fce6040031aaa9b3b4b90eae', '0x0fcde9daaf8b24c5b8f5b7b990d2489038e205bd'];
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const CHAIN_ID = 1337;
const FULL = { blocks: Number(process.env.CDN_BENCH_PONDER_BLOCKS ?? 300), transactions: 200, blockTimeMs: 250 };
const SMOKE = { blocks: 8, transactions: 40, blockTimeMs: 200 };

const hex = (n: number) => `0x${n.toString(16)}`;

/** Transfer logs of the three tokens in blocks from..to, counted through the node's eth_getLogs in windows under its result cap. */
async function countTransfers(node: BenchNode, from: number, to: number): Promise<number> {
  let count = 0;
  for (let start = from; start <= to; start += 20) {
    const logs = await rpc<unknown[]>(node, 'eth_getLogs', [{ fromBlock: hex(start), toBlock: hex(Math.min(to, start + 19)), address: TOKENS, topics: [TRANSFER_TOPIC] }]);
    count += logs.length;
  }
  return count;
}

export const ponderWorkload: Workload = {
  name: 'ponder',
  description: 'ERC-20 balances over one devnet chain with ~250 Transfers per block: the node\'s erc20 kind catching up from its stored, verified journal vs Ponder 0.16 indexing the same Transfers from the node\'s JSON-RPC',
  async run(options) {
    // Without Ponder (not installed) the node's side still runs, and the figure says why it stands alone.
    // The smoke run leaves Ponder out too (its start-up alone is ~20 s of the suite; test/e2e/ponder.test.ts
    // runs it through the same helper).
    const missing = options.smoke ? 'not run by --smoke' : ponderMissing();
    if (missing !== null) process.stderr.write(`ponder: ${missing}; measuring the node's side only\n`);
    const shape = options.smoke ? SMOKE : FULL;
    const sets = [`devnet.block_time_ms=${shape.blockTimeMs}`, `devnet.transactions_per_block=${shape.transactions}`, 'devnet.reorg_every=0'];
    let node = await startBenchNode(sets, { toml: '' });
    const nodeRates: number[] = [];
    const ponderRates: number[] = [];
    const nodeCpuRates: number[] = [];
    let events = 0;
    try {
      await node.waitFor(`block ${shape.blocks}`, async () => Number(await rpc<string>(node, 'eth_blockNumber', [])) >= shape.blocks, 60_000 + shape.blocks * 10_000);
      events = await countTransfers(node, 0, shape.blocks);
      const rounds = options.smoke ? 1 : options.rounds;
      for (let round = 1; round <= rounds; round += 1) {
        // The node: a new erc20 instance over the stored journal, through the processor lane's own commit
        // path, in this process while the node is stopped (bench/workloads/erc20.ts reduceJournal).
        let run: JournalRun | undefined;
        let head = 0;
        node = await node.restart(sets, 60_000, '', async () => {
          const store = openStore({ dataDir: node.dataDir });
          try {
            for (const key of store.chain.canonical.getKeys({ reverse: true, limit: 1 })) head = Number((key as Buffer).readBigUInt64BE(0));
            run = await reduceJournal(store, `erc20-bench-${round}`, TOKENS, CHAIN_ID);
          } finally {
            await store.close();
          }
        });
        // The journal ran through the head the node had stopped at (the devnet kept making blocks).
        const reduced = await countTransfers(node, 0, head);
        nodeRates.push(reduced / run!.seconds);
        nodeCpuRates.push(reduced / run!.cpuSeconds);

        // Ponder over the same blocks from the node's JSON-RPC.
        if (missing !== null) continue;
        // Ponder backfills to the block it takes as final and follows the rest live: startPonder waits until the
        // head is far enough past the range (PONDER_FINALITY_BLOCKS) that the backfill covers all of it.
        const work = mkdtempSync(join(tmpdir(), 'cdn-bench-ponder-'));
        const remove = trackDirectory(work);
        const ponder = await startPonder({ rpcUrl: node.rpcUrl, chainId: CHAIN_ID, tokens: TOKENS, endBlock: shape.blocks, databaseDir: join(work, 'pglite') });
        try {
          await ponder.ready(600_000);
          const backfill = await ponder.backfillSeconds();
          if (backfill === null) throw new Error(`Ponder's log has no backfill start and end:\n${ponder.output().slice(-3000)}`);
          ponderRates.push(events / backfill);
        } finally {
          await ponder.stop();
          remove();
        }
      }
    } finally {
      await node.stop();
    }
    const name = 'Transfer events/s into balances (node erc20 kind from its journal; baseline Ponder 0.16 from the node\'s JSON-RPC)';
    const figures: Figure[] = [
      missing === null ? compared(name, 'events/s', nodeRates, { name: 'Ponder 0.16 (PGlite)', values: ponderRates }, 'higher')
        : figure(`${name} — Ponder not run: ${missing}`, 'events/s', nodeRates, 'higher'),
      figure('Transfer events per CPU second, node erc20 kind', 'events/s', nodeCpuRates, 'higher'),
      figure('Transfer events in the range', 'count', [events]),
      figure('blocks in the range', 'count', [shape.blocks + 1]),
    ];
    return figures;
  },
};
