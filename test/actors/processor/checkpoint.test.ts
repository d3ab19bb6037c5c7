import { test } from 'node:test';
import assert from 'node:assert/strict';
import erc20 from '../../../actors/processors/erc20/index.js';
import { checkpointDue, restoreCheckpoint, takeCheckpoint } from '../../../actors/processor/checkpoint.js';
import type { BlockInput, KindContext } from '../../../actors/processor/kind.js';
import { getCheckpoint, listCheckpoints, putCheckpoint } from '../../../store/checkpoints.js';
import { readProgress, writeProgress } from '../../../store/coverage.js';
import type { ProcessorTables } from '../../../store/env.js';
import { CodedError } from '../../../runtime/errors.js';
import { closeTempStore, createTempStore } from '../../api/aggregate/store-fixture.js';
import { defaultDevnetChain } from '../processors/blobs/support.js';

function context(tables: ProcessorTables): KindContext {
  return { tables, network: 'devnet', schedule: { forks: [] } as unknown as KindContext['schedule'], genesis: { hash: `0x${'00'.repeat(32)}`, timestamp: 0 } };
}

async function devnetInputs(count: number): Promise<BlockInput[]> {
  const chain = await defaultDevnetChain();
  return chain.blocks.slice(0, count).map((b) => ({ number: b.block.header.number, hash: b.hash, header: b.block.header, transactions: [], receipts: b.receipts, sizeBytes: 0, parentTimestamp: null }));
}

const rowsOf = (tables: ProcessorTables) => [...tables.entities.getRange({})].map(({ key, value }) => [Buffer.from(key).toString('hex'), Buffer.from(value).toString('hex')]);

test('a checkpoint is due each time finality crosses a multiple of the interval', () => {
  const policy = { everyBlocks: 10, retained: 2 };
  assert.deepEqual([checkpointDue(policy, null, 9), checkpointDue(policy, null, 10), checkpointDue(policy, 9, 10), checkpointDue(policy, 10, 19), checkpointDue(policy, 12, 31)], [false, true, true, false, true]);
  assert.equal(checkpointDue({ everyBlocks: 0, retained: 2 }, 0, 100), false);
});

test('a checkpoint taken with later blocks applied holds the state as of its block; the newest are retained; restore is accepted only at the exact reduce cursor', async (t) => {
  const temp = createTempStore('cdn-checkpoint-');
  t.after(() => closeTempStore(temp));
  const live = temp.store.processor('erc20@live');
  const reference = temp.store.processor('erc20@reference');
  const kind = erc20.bind({ tokens: '*' });
  const blocks = await devnetInputs(12);
  const policy = { everyBlocks: 4, retained: 2 };
  // The live instance has applied 1..12 and then learns finality through 4, 8 and 10.
  await temp.store.write(() => { for (const block of blocks) kind.apply(context(live), block, 'included'); });
  for (const through of [4, 8, 10]) {
    await temp.store.write(() => {
      kind.finalize(context(live), 0, through);
      if (checkpointDue(policy, through === 4 ? null : through === 8 ? 4 : 8, through)) takeCheckpoint(live, policy, { number: through, hash: blocks[through - 1]!.hash }, 0n, kind.finalizedValue);
    });
  }
  assert.deepEqual(listCheckpoints(live.checkpoints).map((c) => c.checkpoint), ['8', '4'], 'checkpoints at 4 and 8; 10 crossed no multiple');
  // From scratch through block 8, finalized: the checkpoint's rows are exactly that state.
  await temp.store.write(() => { for (const block of blocks.slice(0, 8)) kind.apply(context(reference), block, 'finalized'); });
  const checkpoint = getCheckpoint(live.checkpoints, 8)!;
  assert.deepEqual(checkpoint.rows.map(([k, v]) => [Buffer.from(k).toString('hex'), Buffer.from(v).toString('hex')]), rowsOf(reference));

  // The live state is at block 12: restoring checkpoint 8 is refused and changes nothing.
  await temp.store.write(() => writeProgress(live.state, { ...readProgress(live.state), reduceCursor: { number: 12, hash: blocks[11]!.hash } }));
  const before = rowsOf(live);
  await assert.rejects(restoreCheckpoint(temp.store, live, '8'), (error: Error) => error instanceof CodedError && error.code === 'conflict' && /exact current cursor/.test(error.message));
  await assert.rejects(restoreCheckpoint(temp.store, live, '7'), (error: Error) => error instanceof CodedError && error.code === 'not_found');
  assert.deepEqual(rowsOf(live), before);

  // Reorged back to block 8 (undo 12..9) with a damaged state: the restore at the exact cursor repairs it.
  await temp.store.write(() => { for (let n = 12; n > 8; n -= 1) kind.undo(context(live), n, blocks[n - 1]!.hash, 8); });
  await temp.store.write(() => {
    writeProgress(live.state, { ...readProgress(live.state), reduceCursor: { number: 8, hash: blocks[7]!.hash } });
    live.entities.put(Buffer.from('01ff', 'hex'), Buffer.from('damage'));
  });
  const restored = await restoreCheckpoint(temp.store, live, '8');
  assert.equal(restored.rowCount, checkpoint.rowCount);
  assert.deepEqual(rowsOf(live), rowsOf(reference));

  // A checkpoint whose rows do not match its digest is never restored.
  await temp.store.write(() => putCheckpoint(live.checkpoints, { ...checkpoint, rows: checkpoint.rows.slice(1) }));
  await assert.rejects(restoreCheckpoint(temp.store, live, '8'), (error: Error) => error instanceof CodedError && error.code === 'internal');
  assert.deepEqual(rowsOf(live), rowsOf(reference));
});
