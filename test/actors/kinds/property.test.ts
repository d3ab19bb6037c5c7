/**
 * Property: any sequence of apply / undo / finalize moves (reorgs onto sibling blocks included) leaves
 * every built-in kind's entity rows byte-for-byte equal to processing the final canonical chain from
 * scratch and finalizing as far — and still equal after both undo every unfinalized block (so the
 * recorded inverses restore the same states).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_KINDS } from '../../../actors/kinds/registry.js';
import type { BlockInput, BoundKind, KindContext } from '../../../actors/kinds/sdk/kind.js';
import type { ProcessorTables } from '../../../store/store.js';
import { DEVNET_CONTRACTS } from '../../../net/devnet/index.js';
import { closeTempStore, createTempStore } from '../../api/aggregate/store-fixture.js';
import { defaultDevnetChain, type DevnetChain } from './blobs/support.js';

const OPTIONS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  blobs: {},
  erc20: { tokens: '*' },
  amm: { pools: DEVNET_CONTRACTS.pools.map((p) => p.address) },
};

/** A small deterministic generator (mulberry32), so a failing seed can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Block `n` of the devnet, or a sibling on another fork: another hash, and (for logs) every other receipt's logs dropped. */
function blockAt(chain: DevnetChain, n: number, fork: number): BlockInput {
  const devnet = chain.blocks[n - 1]!;
  const parent = n === 1 ? chain.genesis.timestamp : chain.blocks[n - 2]!.block.header.timestamp;
  const hash = fork === 0 ? devnet.hash : (`0x${fork.toString(16).padStart(2, '0')}${devnet.hash.slice(4)}` as const);
  const receipts = fork === 0 ? devnet.receipts : devnet.receipts.map((r, i) => ((i + fork) % 2 === 0 ? { ...r, logs: [] } : r));
  return { number: n, hash, header: devnet.block.header, transactions: devnet.block.transactions, receipts, sizeBytes: 1000 + n, parentTimestamp: parent };
}

const dump = (tables: ProcessorTables) => [...tables.entities.getRange({})].map(({ key, value }) => `${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`);

test('random apply/undo/finalize sequences leave every kind\'s state equal to processing the final chain from scratch', async (t) => {
  const chain = await defaultDevnetChain();
  const temp = createTempStore('cdn-property-');
  t.after(() => closeTempStore(temp));
  const ctxOf = (tables: ProcessorTables): KindContext => ({ tables, network: 'devnet', schedule: chain.schedule, genesis: chain.genesis });
  let instance = 0;
  for (const seed of [1, 2, 3, 4, 5]) {
    const next = random(seed);
    for (const [name, kind] of BUILTIN_KINDS) {
      const bound: BoundKind = kind.bind(OPTIONS[name]!);
      const live = temp.store.processor(`live-${instance}`);
      const scratch = temp.store.processor(`scratch-${instance}`);
      instance += 1;
      const canonical: Array<{ number: number; fork: number }> = [];
      let finalized = 0;
      const moves: string[] = [];
      for (let step = 0; step < 60; step += 1) {
        const roll = next();
        const top = canonical.length;
        if (roll < 0.6 && top < 40) {
          const fork = next() < 0.3 ? 1 + Math.floor(next() * 3) : 0;
          const block = blockAt(chain, top + 1, fork);
          await temp.store.write(() => bound.apply(ctxOf(live), block, block.number <= finalized ? 'finalized' : 'included'));
          canonical.push({ number: top + 1, fork });
          moves.push(`a${top + 1}/${fork}`);
        } else if (roll < 0.85 && top > finalized) {
          const undone = canonical.pop()!;
          await temp.store.write(() => bound.undo(ctxOf(live), undone.number, blockAt(chain, undone.number, undone.fork).hash, finalized === 0 ? null : finalized));
          moves.push(`u${undone.number}`);
        } else if (top > finalized) {
          const through = finalized + 1 + Math.floor(next() * (top - finalized));
          await temp.store.write(() => bound.finalize(ctxOf(live), finalized + 1, through));
          finalized = through;
          moves.push(`f${through}`);
        }
      }
      await temp.store.write(() => {
        for (const { number, fork } of canonical) bound.apply(ctxOf(scratch), blockAt(chain, number, fork), 'included');
        if (finalized > 0) bound.finalize(ctxOf(scratch), 1, finalized);
      });
      assert.deepEqual(dump(live), dump(scratch), `kind ${name}, seed ${seed}, moves ${moves.join(' ')}`);
      for (let i = canonical.length - 1; i >= 0 && canonical[i]!.number > finalized; i -= 1) {
        const { number, fork } = canonical[i]!;
        const hash = blockAt(chain, number, fork).hash;
        await temp.store.write(() => {
          bound.undo(ctxOf(live), number, hash, finalized === 0 ? null : finalized);
          bound.undo(ctxOf(scratch), number, hash, finalized === 0 ? null : finalized);
        });
        assert.deepEqual(dump(live), dump(scratch), `after undoing ${number}: kind ${name}, seed ${seed}, moves ${moves.join(' ')}`);
      }
    }
  }
});
