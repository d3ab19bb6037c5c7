/**
 * The lane's commit (commitMoves) of an ordered-state kind through its StateBatch: one batch of
 * applies with finality (and checkpoints) inside it, then a reorg in a second batch, leaves the rows,
 * inverses and checkpoint equal to the kind applied move by move straight to the tables.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import erc20 from '../../../actors/kinds/erc20/index.js';
import { commitMoves, type CommitContext } from '../../../actors/processor/commit.js';
import type { KindContext } from '../../../actors/kinds/sdk/kind.js';
import { getCheckpoint, listCheckpoints } from '../../../store/checkpoints.js';
import { putBlockMaterial } from '../../../store/chain-material.js';
import type { ProcessorTables } from '../../../store/store.js';
import type { JournalMove } from '../../../store/journal.js';
import { encodeBlockBody, encodeEth69Receipts, encodeHeader } from '../../../net/eth/index.js';
import { closeTempStore, createTempStore, CHAIN_ID } from '../../api/aggregate/store-fixture.js';
import { defaultDevnetChain } from '../kinds/blobs/support.js';

const dump = (tables: ProcessorTables) => ({
  rows: [...tables.entities.getRange({})].map(({ key, value }) => `${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`),
  inverses: [...tables.undo.getRange({})].map(({ key, value }) => `${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`),
});

test('commitMoves through the state batch equals the kind applied move by move; its checkpoint holds the state at its block', async (t) => {
  const chain = await defaultDevnetChain();
  const temp = createTempStore('cdn-commit-');
  t.after(() => closeTempStore(temp));
  const blocks = chain.blocks.slice(0, 24);
  await temp.store.write(() => {
    for (const b of blocks) {
      putBlockMaterial(temp.store, {
        number: b.block.header.number, hash: Buffer.from(b.hash.slice(2), 'hex'), header: encodeHeader(b.block.header),
        body: encodeBlockBody({ transactions: b.block.transactions, uncles: [], ...(b.block.withdrawals ? { withdrawals: b.block.withdrawals } : {}) }),
        receipts: encodeEth69Receipts(b.receipts),
      });
    }
  });
  const hashOf = (n: number) => Buffer.from(blocks[n - 1]!.hash.slice(2), 'hex');
  const live = temp.store.processor('erc20-live');
  const direct = temp.store.processor('erc20-direct');
  const reference = temp.store.processor('erc20-reference');
  const kind = erc20.bind({ tokens: '*' });
  const chainArgs = { tables: live, network: 'devnet', schedule: chain.schedule, genesis: chain.genesis };
  const ctx: CommitContext = {
    store: temp.store, tables: live, kind, changeSchema: erc20.changeSchema, needs: erc20.needs, ordering: erc20.ordering,
    checkpoints: { everyBlocks: 4, retained: 3 }, kindContext: chainArgs, instance: 'erc20-live', chainId: CHAIN_ID, startBlock: null,
  };
  // Batch 1: applies 1..20 with finality trailing by 6 (checkpoints at 4, 8, 12 fall inside the batch).
  const first: JournalMove[] = [];
  for (let n = 1; n <= 20; n += 1) {
    first.push({ op: 'apply', number: n, hash: hashOf(n) });
    if (n > 6) first.push({ op: 'finalize', number: n - 6, hash: hashOf(n - 6) });
  }
  // Batch 2: undo 20..17, re-apply 17..24, finalize through 16.
  const second: JournalMove[] = [];
  for (let n = 20; n >= 17; n -= 1) second.push({ op: 'undo', number: n, hash: hashOf(n) });
  for (let n = 17; n <= 24; n += 1) second.push({ op: 'apply', number: n, hash: hashOf(n) });
  second.push({ op: 'finalize', number: 16, hash: hashOf(16) });
  let sequence = 0;
  for (const moves of [first, second]) await commitMoves(ctx, moves.map((move) => ({ sequence: ++sequence, move })), '2026-01-01T00:00:00.000Z');

  // The same moves, straight to the tables (no batch), one transaction each.
  const plain: KindContext = { ...chainArgs, tables: direct };
  let finalized: number | null = null;
  for (const move of [...first, ...second]) {
    const hash = `0x${Buffer.from(move.hash).toString('hex')}` as const;
    const block = blocks[move.number - 1]!;
    await temp.store.write(() => {
      if (move.op === 'apply') kind.apply(plain, { number: move.number, hash, header: block.block.header, transactions: [], receipts: block.receipts, sizeBytes: 0, parentTimestamp: null }, finalized !== null && move.number <= finalized ? 'finalized' : 'included');
      else if (move.op === 'undo') kind.undo(plain, move.number, hash, finalized);
      else {
        kind.finalize(plain, (finalized ?? 0) + 1, move.number);
        finalized = move.number;
      }
    });
  }
  assert.deepEqual(dump(live), dump(direct));

  // Checkpoints 16, 12 and 8 are retained; 12's rows are the state of blocks 1..12 applied from scratch.
  assert.deepEqual(listCheckpoints(live.checkpoints).map((c) => c.checkpoint), ['16', '12', '8']);
  const referenceCtx: KindContext = { ...chainArgs, tables: reference };
  await temp.store.write(() => {
    for (const b of blocks.slice(0, 12)) kind.apply(referenceCtx, { number: b.block.header.number, hash: b.hash, header: b.block.header, transactions: [], receipts: b.receipts, sizeBytes: 0, parentTimestamp: null }, 'finalized');
  });
  const rowsOf = (rows: ReadonlyArray<readonly [Uint8Array, Uint8Array]>) => rows.map(([k, v]) => `${Buffer.from(k).toString('hex')}=${Buffer.from(v).toString('hex')}`);
  assert.deepEqual(rowsOf(getCheckpoint(live.checkpoints, 12)!.rows), dump(reference).rows);
  assert.ok(dump(reference).rows.length > 0);
});
