/**
 * The lane's commit batch (StateBatch, actors/kinds/sdk/state.ts): random apply/undo/finalize
 * moves grouped into write transactions of several moves each, through one batch per transaction
 * (flushed at random points inside it too), leave every ordered-state kind's rows and recorded
 * inverses byte-for-byte equal to the same moves written through to the tables one by one — and
 * undoing every unfinalized block afterwards restores the same states on both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_KINDS } from '../../../../actors/kinds/registry.js';
import { StateBatch, stateAsOf } from '../../../../actors/kinds/sdk/state.js';
import { pendingInverses } from '../../../../store/undo-records.js';
import type { BlockInput, BoundKind, KindContext } from '../../../../actors/kinds/sdk/kind.js';
import type { ProcessorTables } from '../../../../store/store.js';
import { DEVNET_CONTRACTS } from '../../../../net/devnet/index.js';
import { closeTempStore, createTempStore } from '../../../api/aggregate/store-fixture.js';
import { defaultDevnetChain, type DevnetChain } from '../blobs/support.js';

const OPTIONS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  erc20: { tokens: '*' },
  amm: { pools: DEVNET_CONTRACTS.pools.map((p) => p.address) },
};

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

function blockAt(chain: DevnetChain, n: number, fork: number): BlockInput {
  const devnet = chain.blocks[n - 1]!;
  const parent = n === 1 ? chain.genesis.timestamp : chain.blocks[n - 2]!.block.header.timestamp;
  const hash = fork === 0 ? devnet.hash : (`0x${fork.toString(16).padStart(2, '0')}${devnet.hash.slice(4)}` as const);
  const receipts = fork === 0 ? devnet.receipts : devnet.receipts.map((r, i) => ((i + fork) % 2 === 0 ? { ...r, logs: [] } : r));
  return { number: n, hash, header: devnet.block.header, transactions: devnet.block.transactions, receipts, sizeBytes: 1000 + n, parentTimestamp: parent };
}

const dump = (tables: ProcessorTables) => ({
  rows: [...tables.entities.getRange({})].map(({ key, value }) => `${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`),
  inverses: [...tables.undo.getRange({})].map(({ key, value }) => `${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`),
});

type Move = (bound: BoundKind, ctx: KindContext) => unknown;

test('moves through one StateBatch per transaction leave the rows and inverses equal to writing each move through', async (t) => {
  const chain = await defaultDevnetChain();
  const temp = createTempStore('cdn-state-batch-');
  t.after(() => closeTempStore(temp));
  const ctxOf = (tables: ProcessorTables, stateBatch?: StateBatch): KindContext => ({ tables, network: 'devnet', schedule: chain.schedule, genesis: chain.genesis, ...(stateBatch ? { stateBatch } : {}) });
  let instance = 0;
  let compared = 0;
  for (const seed of [11, 12, 13, 14, 15, 16]) {
    const next = random(seed);
    for (const [name, options] of Object.entries(OPTIONS)) {
      const bound = BUILTIN_KINDS.get(name)!.bind(options);
      const direct = temp.store.processor(`direct-${instance}`);
      const batched = temp.store.processor(`batched-${instance}`);
      instance += 1;
      const canonical: Array<{ number: number; fork: number }> = [];
      let finalized = 0;
      const labels: string[] = [];
      for (let group = 0; group < 20; group += 1) {
        const moves: Move[] = [];
        const size = 1 + Math.floor(next() * 8);
        for (let m = 0; m < size; m += 1) {
          const roll = next();
          const top = canonical.length;
          if (roll < 0.6 && top < 40) {
            const fork = next() < 0.3 ? 1 + Math.floor(next() * 3) : 0;
            const block = blockAt(chain, top + 1, fork);
            const finality = block.number <= finalized ? 'finalized' : 'included';
            moves.push((kind, ctx) => kind.apply(ctx, block, finality));
            canonical.push({ number: top + 1, fork });
            labels.push(`a${top + 1}/${fork}`);
          } else if (roll < 0.85 && top > finalized) {
            const undone = canonical.pop()!;
            const hash = blockAt(chain, undone.number, undone.fork).hash;
            const through = finalized === 0 ? null : finalized;
            moves.push((kind, ctx) => kind.undo(ctx, undone.number, hash, through));
            labels.push(`u${undone.number}`);
          } else if (top > finalized) {
            const from = finalized + 1;
            const through = finalized + 1 + Math.floor(next() * (top - finalized));
            moves.push((kind, ctx) => kind.finalize(ctx, from, through));
            finalized = through;
            labels.push(`f${through}`);
          }
        }
        const flushAt = new Set(moves.map((_, i) => i).filter(() => next() < 0.2));
        const directChanges: unknown[] = [];
        const batchedChanges: unknown[] = [];
        await temp.store.write(() => { for (const move of moves) directChanges.push(move(bound, ctxOf(direct))); });
        await temp.store.write(() => {
          const batch = new StateBatch(batched.entities, batched.undo);
          moves.forEach((move, i) => {
            batchedChanges.push(move(bound, ctxOf(batched, batch)));
            if (flushAt.has(i)) batch.flush();
          });
          batch.flush();
        });
        assert.deepEqual(batchedChanges, directChanges, `changes: kind ${name}, seed ${seed}, moves ${labels.join(' ')}`);
        assert.deepEqual(dump(batched), dump(direct), `kind ${name}, seed ${seed}, moves ${labels.join(' ')}`);
        compared += 1;
      }
      for (let i = canonical.length - 1; i >= 0 && canonical[i]!.number > finalized; i -= 1) {
        const { number, fork } = canonical[i]!;
        const hash = blockAt(chain, number, fork).hash;
        const through = finalized === 0 ? null : finalized;
        await temp.store.write(() => {
          bound.undo(ctxOf(direct), number, hash, through);
          const batch = new StateBatch(batched.entities, batched.undo);
          bound.undo(ctxOf(batched, batch), number, hash, through);
          batch.flush();
        });
        assert.deepEqual(dump(batched), dump(direct), `after undoing ${number}: kind ${name}, seed ${seed}`);
      }
    }
  }
  assert.ok(compared >= 200, `compared ${compared} transactions`);
});

/** A block's record (one per block, store/undo-records.ts) rewritten as an earlier version stored it: one record per write, keyed by ordinal. */
function asPerWriteRecords(undo: ProcessorTables['undo']): void {
  for (const { key, value } of [...undo.getRange({})]) {
    const recordKey = Buffer.from(key as Buffer);
    const bytes = Buffer.from(value as Buffer);
    assert.equal(recordKey.length, 16, 'a block record');
    undo.remove(recordKey);
    let at = 0;
    let ordinal = 0;
    while (at < bytes.length) {
      const keyLength = bytes.readUInt16BE(at + 1);
      const previousLength = bytes.readUInt32BE(at + 3 + keyLength);
      const legacyKey = Buffer.alloc(12);
      recordKey.copy(legacyKey, 0, 0, 8);
      legacyKey.writeUInt32BE(ordinal, 8);
      undo.put(legacyKey, Buffer.concat([bytes.subarray(at, at + 3 + keyLength), bytes.subarray(at + 7 + keyLength, at + 7 + keyLength + previousLength)]));
      at += 7 + keyLength + previousLength;
      ordinal += 1;
    }
    assert.equal(ordinal, recordKey.readUInt32BE(12), 'the key counts the record\'s inverses');
  }
}

test('an earlier version\'s per-write undo records are still undone, finalized, counted and read as of a block, as one record per block is', async (t) => {
  const chain = await defaultDevnetChain();
  const temp = createTempStore('cdn-state-legacy-');
  t.after(() => closeTempStore(temp));
  for (const [name, options] of Object.entries(OPTIONS)) {
    const bound = BUILTIN_KINDS.get(name)!.bind(options);
    const current = temp.store.processor(`current-${name}`);
    const legacy = temp.store.processor(`legacy-${name}`);
    const ctxOf = (tables: ProcessorTables): KindContext => ({ tables, network: 'devnet', schedule: chain.schedule, genesis: chain.genesis });
    const top = Math.min(chain.blocks.length, 24);
    await temp.store.write(() => {
      for (const tables of [current, legacy]) for (let n = 1; n <= top; n += 1) bound.apply(ctxOf(tables), blockAt(chain, n, 0), 'included');
      asPerWriteRecords(legacy.undo);
    });
    const pending = pendingInverses(current.undo);
    assert.ok(pending > top, `${name}: ${pending} inverses pending over ${top} blocks`);
    assert.equal(pendingInverses(legacy.undo), pending, `${name}: per-write records count one each`);
    assert.ok([...legacy.undo.getKeys({})].length > [...current.undo.getKeys({})].length, `${name}: the legacy table holds more records`);
    for (const n of [8, 16]) assert.deepEqual(stateAsOf(legacy.entities, legacy.undo, n), stateAsOf(current.entities, current.undo, n), `${name}: the state as of block ${n}`);
    // Undo the top blocks, finalize the lower half, undo one more: the same changes and rows.
    for (const n of [top, top - 1]) {
      const hash = blockAt(chain, n, 0).hash;
      const changes = await temp.store.write(() => [bound.undo(ctxOf(current), n, hash, null), bound.undo(ctxOf(legacy), n, hash, null)]);
      assert.deepEqual(changes[1], changes[0], `${name}: undo of ${n}`);
      assert.ok(changes[0]!.length > 0 || name !== 'erc20', `${name}: undo of ${n} restores rows`);
    }
    await temp.store.write(() => { for (const tables of [current, legacy]) bound.finalize(ctxOf(tables), 1, top / 2); });
    assert.deepEqual(dump(legacy).rows, dump(current).rows, `${name}: rows after finality`);
    assert.equal(pendingInverses(legacy.undo), pendingInverses(current.undo), `${name}: pending after finality`);
    const hash = blockAt(chain, top - 2, 0).hash;
    const changes = await temp.store.write(() => [bound.undo(ctxOf(current), top - 2, hash, top / 2), bound.undo(ctxOf(legacy), top - 2, hash, top / 2)]);
    assert.deepEqual(changes[1], changes[0], `${name}: undo after finality`);
    assert.deepEqual(dump(legacy).rows, dump(current).rows, `${name}: rows after the last undo`);
  }
});
