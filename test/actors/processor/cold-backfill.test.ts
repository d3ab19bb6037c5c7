/**
 * Cold backfills in the processor lane: the split (the finalized block F as target, the live lane right before the
 * journal's apply of the canonical F+1, even after a reorg of F+1), and an ordered-state kind's history applied in
 * chain order only — out of order or off the chain fails the chunk with nothing committed — whose rows equal the
 * kind applied block by block, the backfill marked completed by the chunk that makes the range whole.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import erc20 from '../../../actors/kinds/erc20/index.js';
import { coldSplit, planColdBackfill, backfillPending } from '../../../actors/processor/cold-backfill.js';
import { applyHistoryBlocks } from '../../../actors/processor/history-apply.js';
import type { CommitContext, } from '../../../actors/processor/commit.js';
import type { KindContext } from '../../../actors/kinds/sdk/kind.js';
import { readProgress, readRanges } from '../../../store/coverage.js';
import type { ProcessorTables } from '../../../store/store.js';
import { encodeJournalMove, type JournalMove } from '../../../store/journal.js';
import { u64Key } from '../../../store/keys.js';
import { closeTempStore, createTempStore, CHAIN_ID } from '../../api/aggregate/store-fixture.js';
import { defaultDevnetChain, recordCanonical } from '../kinds/blobs/support.js';

const rows = (tables: ProcessorTables) => [...tables.entities.getRange({})].map(({ key, value }) => `${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`);

test('cold backfill: the split at the finalized block, and ordered-state history applied in chain order only, equal to the kind block by block', async (t) => {
  const chain = await defaultDevnetChain();
  const temp = createTempStore('cdn-cold-');
  t.after(() => closeTempStore(temp));
  const { store } = temp;
  const blocks = chain.blocks.slice(0, 24);
  const hashOf = (n: number) => Buffer.from(blocks[n - 1]!.hash.slice(2), 'hex');
  const hexOf = (n: number) => blocks[n - 1]!.hash as `0x${string}`;
  // Journal: apply 1..24 with finality trailing by 6, and a reorg of 17 (17' applied, undone, 17 applied) after finalize 16.
  const moves: JournalMove[] = [];
  const other = Buffer.alloc(32, 0xab);
  for (let n = 1; n <= 24; n += 1) {
    if (n === 17) moves.push({ op: 'apply', number: 17, hash: other }, { op: 'undo', number: 17, hash: other });
    moves.push({ op: 'apply', number: n, hash: hashOf(n) });
    if (n > 6 && n - 6 <= 16) moves.push({ op: 'finalize', number: n - 6, hash: hashOf(n - 6) });
  }
  await store.write(() => {
    recordCanonical(store, blocks);
    moves.forEach((move, i) => store.chain.journal.put(u64Key(i + 1), encodeJournalMove(move)));
  });
  const applyOf17 = moves.findIndex((m) => m.op === 'apply' && m.number === 17 && Buffer.compare(Buffer.from(m.hash), hashOf(17)) === 0) + 1;
  assert.deepEqual(coldSplit(store, 1), { targetBlock: 16, journalSequence: applyOf17 - 1 }, 'the live lane starts right before the canonical 17, after the abandoned 17\'');
  assert.equal(coldSplit(store, 17), null, 'a start above the finalized block needs no history');

  const tables = store.processor('cold');
  const planned = await planColdBackfill(store, tables, 1, 'devnet');
  assert.deepEqual(planned, { fromBlock: 1, targetBlock: 16, source: 'devnet', completed: false });
  const progress = readProgress(tables.state);
  assert.equal(progress.journalSequence, applyOf17 - 1);
  assert.equal(progress.finalizedNumber, 16);
  assert.equal(progress.state, 'backfilling');
  assert.ok(backfillPending(progress));
  assert.deepEqual(await planColdBackfill(store, tables, 1, 'devnet'), planned, 'a restart keeps the plan');

  const kind = erc20.bind({ tokens: '*' });
  const kindContext: KindContext = { tables, network: 'devnet', schedule: chain.schedule, genesis: chain.genesis };
  const ctx: CommitContext = {
    store, tables, kind, changeSchema: erc20.changeSchema, needs: erc20.needs, ordering: erc20.ordering,
    checkpoints: { everyBlocks: 0, retained: 3 }, kindContext, instance: 'cold', chainId: CHAIN_ID, startBlock: 1,
  };
  const chunk = (from: number, to: number) => ({ type: 'history.apply' as const, job: 'cb-cold', blocks: Array.from({ length: to - from + 1 }, (_, i) => ({ number: from + i, hash: hexOf(from + i) })) });
  const at = '2026-01-01T00:00:00.000Z';
  // Out of chain order: block 2 before block 1 is refused, nothing committed.
  await assert.rejects(applyHistoryBlocks(ctx, chunk(2, 5), at), /out of chain order/);
  assert.deepEqual(readRanges(tables.coverage), []);
  const first = await applyHistoryBlocks(ctx, chunk(1, 8), at);
  assert.equal(first.applied, 8);
  assert.equal(first.backfillCompleted, false);
  assert.deepEqual(readProgress(tables.state).reduceCursor, { number: 8, hash: hexOf(8) });
  // A chunk that skips a block is refused whole.
  await assert.rejects(applyHistoryBlocks(ctx, chunk(10, 16), at), /its next block is 9/);
  const last = await applyHistoryBlocks(ctx, chunk(9, 16), at);
  assert.equal(last.backfillCompleted, true);
  assert.deepEqual(readRanges(tables.coverage), [{ from: 1, to: 16 }]);
  assert.equal(readProgress(tables.state).coldBackfill?.completed, true);
  // Once complete, the state is ahead of any history: more is refused.
  await assert.rejects(applyHistoryBlocks(ctx, chunk(17, 17), at), /takes history only through its cold backfill/);

  // The rows equal the kind applied to 1..16 block by block, straight to the tables.
  const reference = store.processor('reference');
  const plain: KindContext = { ...kindContext, tables: reference };
  for (let n = 1; n <= 16; n += 1) {
    const block = blocks[n - 1]!;
    await store.write(() => kind.apply(plain, { number: n, hash: hexOf(n), header: block.block.header, transactions: [], receipts: block.receipts, sizeBytes: 0, parentTimestamp: null }, 'finalized'));
  }
  assert.ok(rows(reference).length > 0, 'the devnet blocks carry token transfers');
  assert.deepEqual(rows(tables), rows(reference));
});
