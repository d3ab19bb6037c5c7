import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderScheduleRow, renderTransaction } from '../../../actors/kinds/blobs/render.js';
import { BLOBS, getJson, startListener, type ErrorShape } from './listener-fixture.js';
import { blobsBlock, blobTransaction, scheduleRow, seedBlocks, seedSchedule } from './store-fixture.js';

const CANONICAL = '/v1/processors/blobs/query/blobs';
/** Transactions of block 200 in canonical index order; their hashes are deliberately not in byte order. */
const BLOCK_200_TXS = [blobTransaction(200, 9), blobTransaction(200, 2), blobTransaction(200, 5)];
const SCHEDULE = [
  scheduleRow('cancun', 0, 1_700_000_000),
  scheduleRow('prague', 250, 1_700_000_000 + 250 * 12),
  scheduleRow('osaka', 400, 1_700_000_000 + 400 * 12),
  scheduleRow('bpo1', null, 1_700_000_000 + 600 * 12),
];

async function seed({ store }: { store: import('../../../store/store.js').Store }): Promise<void> {
  await seedBlocks(store, BLOBS.instance, [{ block: blobsBlock(200), transactions: BLOCK_200_TXS }, { block: blobsBlock(201) }, { block: blobsBlock(260) }, { block: blobsBlock(450) }, { block: blobsBlock(700) }]);
  await seedSchedule(store, BLOBS.instance, SCHEDULE);
}

test("a block's transactions are a Page of the stored rows in canonical transaction-index order", async (t) => {
  const node = await startListener(t, seed);
  const response = await fetch(`${node.base}${CANONICAL}/transactions?blockNumber=200`);
  assert.equal(response.status, 200);
  const text = await response.text();
  assert.ok(text.startsWith(`{"data":[${BLOCK_200_TXS.map((tx) => renderTransaction(tx).toString('utf8')).join(',')}],"nextCursor":null,"coverage":`));
  assert.deepEqual((JSON.parse(text) as { coverage: { requested: unknown } }).coverage.requested, { fromBlock: 200, toBlock: 200 });
  const none = await getJson<{ data: unknown[] }>(node.base, '/v1/q/blobs/transactions?blockNumber=201');
  assert.deepEqual([none.status, none.body.data], [200, []], 'a covered block without blob transactions is a complete empty answer');
  const uncovered = await getJson<ErrorShape>(node.base, `${CANONICAL}/transactions?blockNumber=202`);
  assert.deepEqual([uncovered.status, uncovered.body.error.code], [409, 'range_incomplete']);
  const missing = await getJson<ErrorShape>(node.base, `${CANONICAL}/transactions`);
  assert.deepEqual([missing.status, missing.body.error.code], [400, 'invalid_request']);
});

test('one transaction by hash: the stored row; unknown 404; malformed 400', async (t) => {
  const node = await startListener(t, seed);
  const tx = BLOCK_200_TXS[1]!;
  const response = await fetch(`${node.base}${CANONICAL}/transactions/${tx.txHash}`);
  assert.equal(response.status, 200);
  assert.equal(await response.text(), renderTransaction(tx).toString('utf8'));
  assert.equal(await (await fetch(`${node.base}/v1/q/blobs/transactions/${tx.txHash.toUpperCase().replace('0X', '0x')}`)).text(), renderTransaction(tx).toString('utf8'), 'hex case does not matter');
  const unknown = await getJson<ErrorShape>(node.base, `${CANONICAL}/transactions/0x${'00'.repeat(32)}`);
  assert.deepEqual([unknown.status, unknown.body.error.code], [404, 'not_found']);
  for (const bad of ['0x1234', `${'00'.repeat(32)}`, `0x${'zz'.repeat(32)}`]) {
    const response = await getJson<ErrorShape>(node.base, `${CANONICAL}/transactions/${bad}`);
    assert.deepEqual([response.status, response.body.error.code], [400, 'invalid_request'], bad);
  }
});

test('the schedule lists every row in activation order; atBlock selects the row in force at that block', async (t) => {
  const node = await startListener(t, seed);
  const rows = SCHEDULE.map((row) => renderScheduleRow(row).toString('utf8'));
  const all = await fetch(`${node.base}${CANONICAL}/schedule`);
  assert.ok((await all.text()).startsWith(`{"data":[${rows.join(',')}],"nextCursor":null,"coverage":`));
  const at = async (block: number) => getJson<{ data: Array<{ name: string }> } & ErrorShape>(node.base, `/v1/q/blobs/schedule?atBlock=${block}`);
  assert.deepEqual((await at(200)).body.data.map((r) => r.name), ['cancun'], 'by the block timestamp');
  assert.deepEqual((await at(260)).body.data.map((r) => r.name), ['prague']);
  assert.deepEqual((await at(450)).body.data.map((r) => r.name), ['osaka']);
  assert.deepEqual((await at(700)).body.data.map((r) => r.name), ['bpo1'], 'a fork without a resolved activation block, decided by the stored block timestamp');
  assert.deepEqual((await at(255)).body.data.map((r) => r.name), ['prague'], 'an unstored block decided by known activation blocks');
  const early = await at(0);
  assert.deepEqual((early.body.data ?? []).map((r) => r.name), ['cancun'], 'active from genesis');
  const unknown = await at(500);
  assert.deepEqual([unknown.status, unknown.body.error.code], [409, 'range_incomplete'], 'a later fork may or may not be active: not guessed');
  const bad = await at(-1);
  assert.equal(bad.status, 400);
});

test('output = none: every typed route answers output_not_retained with a rebuild or source-scan action, never an empty page', async (t) => {
  const node = await startListener(t, seed, { processors: [{ ...BLOBS, output: 'none' }] });
  for (const path of ['/blocks', '/blocks?fromBlock=200&toBlock=201', '/blocks/200', '/transactions?blockNumber=200', `/transactions/${BLOCK_200_TXS[0]!.txHash}`, '/schedule', '/schedule?atBlock=200']) {
    for (const base of [CANONICAL, '/v1/q/blobs']) {
      const { status, body } = await getJson<ErrorShape>(node.base, `${base}${path}`);
      assert.equal(status, 409, `${base}${path}`);
      assert.equal(body.error.code, 'output_not_retained', `${base}${path}`);
      assert.equal(body.error.details?.action, 'rebuild or source scan');
    }
  }
});
