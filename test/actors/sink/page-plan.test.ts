import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChangeEnvelope } from '../../../api/client/index.js';
import { BLOBS_MAPPING, transactionKey } from '../../../actors/sink/mappings/blobs.js';
import { ERC20_MAPPING } from '../../../actors/sink/mappings/erc20.js';
import { UnknownChangeError } from '../../../actors/sink/mappings/index.js';
import { declaredMapping } from '../../../actors/sink/mappings/declared.js';
import { FeedGapError, planPage, type PlanState } from '../../../actors/sink/page-plan.js';

const TOKEN = '0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506';
const holder = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const balanceKey = (n: number) => `01${TOKEN.slice(2)}${holder(n).slice(2)}`;
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

function envelope(sequence: number, operation: ChangeEnvelope['operation'], kind: string, key: string | null, data: unknown, block: number, finality = 'included'): ChangeEnvelope {
  return { sequence: String(sequence), cursor: `c${sequence}`, operation, kind, key, data, finality, block: { number: block, hash: hash(block), parentHash: hash(block - 1), timestamp: block * 12 }, emittedAt: new Date(1_700_000_000_000 + sequence).toISOString() };
}

function put(sequence: number, who: number, balance: string, block: number, operation: 'apply' | 'undo' = 'apply'): ChangeEnvelope {
  return envelope(sequence, operation, 'erc20.balance.put', balanceKey(who), { token: TOKEN, address: holder(who), balance, lastChange: { blockNumber: block, blockHash: hash(block), timestamp: block * 12 }, finality: 'included' }, block);
}

function remove(sequence: number, who: number, block: number): ChangeEnvelope {
  return envelope(sequence, 'apply', 'erc20.balance.delete', balanceKey(who), { token: TOKEN, address: holder(who), lastChange: { blockNumber: block, blockHash: hash(block), timestamp: 0 } }, block);
}

function finalized(sequence: number, block: number, kind = 'erc20.block.finalized'): ChangeEnvelope {
  return envelope(sequence, 'finalized', kind, null, null, block, 'finalized');
}

const fresh = (sequence: number, boundaries: Record<string, number> = {}): PlanState => ({ sequence: BigInt(sequence), boundaries: new Map(Object.entries(boundaries).map(([c, b]) => [c, BigInt(b)])) });

test('each key is written once per batch, with the value of its last change; a delete after a put removes it', () => {
  const plan = planPage([put(11, 1, '5', 100), put(12, 2, '7', 100), put(13, 1, '9', 101), put(14, 3, '1', 101), remove(15, 3, 101)], ERC20_MAPPING, new Set(['balances']), fresh(10));
  const ops = plan.tables.get('balances')!;
  assert.deepEqual([...ops.upserts.keys()].sort(), [balanceKey(1), balanceKey(2)].sort());
  assert.equal(ops.upserts.get(balanceKey(1))!.data.balance, '9');
  assert.equal(ops.upserts.get(balanceKey(1))!.sequence, '13');
  assert.equal(ops.upserts.get(balanceKey(1))!.blockNumber, 101);
  assert.deepEqual([...ops.deletes], [balanceKey(3)]);
  assert.deepEqual(plan.last, { sequence: 15n, cursor: 'c15' });
  assert.equal(plan.applied, 5);
  assert.equal(plan.emittedAt.length, 5);
});

test('a redelivered change (at or below the stored sequence) is skipped, not applied again', () => {
  const plan = planPage([put(11, 1, '5', 100), put(12, 2, '7', 100), put(13, 1, '9', 101)], ERC20_MAPPING, new Set(['balances']), fresh(12));
  assert.equal(plan.skipped, 2);
  assert.equal(plan.applied, 1);
  assert.deepEqual([...plan.tables.get('balances')!.upserts.keys()], [balanceKey(1)]);
  const replay = planPage([put(11, 1, '5', 100), put(12, 2, '7', 100)], ERC20_MAPPING, new Set(['balances']), fresh(12));
  assert.equal(replay.last, null, 'a batch of replays moves nothing');
  assert.equal(replay.tables.size, 0);
});

test('a gap in the sequence is refused', () => {
  assert.throws(() => planPage([put(11, 1, '5', 100), put(13, 2, '7', 100)], ERC20_MAPPING, new Set(['balances']), fresh(10)), (error: unknown) => error instanceof FeedGapError && /from sequence 11 to 13/.test(error.message));
  assert.throws(() => planPage([put(12, 1, '5', 100)], ERC20_MAPPING, new Set(['balances']), fresh(10)), FeedGapError);
});

test('an undo restoring a row is an upsert of the value it carries', () => {
  const plan = planPage([put(11, 1, '9', 105), put(12, 1, '5', 100, 'undo')], ERC20_MAPPING, new Set(['balances']), fresh(10));
  const row = plan.tables.get('balances')!.upserts.get(balanceKey(1))!;
  assert.equal(row.data.balance, '5');
  assert.equal(row.blockNumber, 100, 'the row\'s block is its lastChange, not the undone block');
  assert.equal(plan.operations.undo, 1);
});

test('finalized marks the batch\'s pending rows at or below its block (column and data) and the table\'s through the UPDATE', () => {
  const plan = planPage([put(11, 1, '5', 100), put(12, 2, '7', 102), finalized(13, 101), put(14, 3, '8', 103)], ERC20_MAPPING, new Set(['balances']), fresh(10));
  const ops = plan.tables.get('balances')!;
  assert.equal(ops.finalizedThrough, 101);
  assert.equal(ops.upserts.get(balanceKey(1))!.finality, 'finalized');
  assert.equal(ops.upserts.get(balanceKey(1))!.data.finality, 'finalized', 'the JSON says what the node serves');
  assert.equal(ops.upserts.get(balanceKey(2))!.finality, 'included');
  assert.equal(ops.upserts.get(balanceKey(3))!.finality, 'included');
  assert.equal(plan.operations.finalized, 1);
});

test('a table\'s finalized block: a finalized change updates only the blocks above it, one at or below it changes nothing, and a row written at or below it is written finalized', () => {
  const state: PlanState = { ...fresh(10), finalized: new Map([['balances', 100]]) };
  const plan = planPage([put(11, 1, '5', 99, 'undo'), finalized(12, 100), put(13, 2, '7', 103), finalized(14, 102)], ERC20_MAPPING, new Set(['balances']), state);
  const ops = plan.tables.get('balances')!;
  assert.equal(ops.finalizedFrom, 100, 'the UPDATE reads the rows above block 100 only');
  assert.equal(ops.finalizedThrough, 102);
  assert.equal(plan.finalized.get('balances'), 102, 'the table\'s finalized block moves with the batch');
  const restored = ops.upserts.get(balanceKey(1))!;
  assert.equal(restored.finality, 'finalized', 'an undo restoring a value of block 99 writes it as the node serves it');
  assert.equal(restored.data.finality, 'finalized');
  assert.equal(ops.upserts.get(balanceKey(2))!.finality, 'included');
  const none = planPage([finalized(11, 90)], ERC20_MAPPING, new Set(['balances']), state);
  assert.equal(none.tables.get('balances'), undefined, 'a finalized change at or below the table\'s finalized block updates nothing');
  assert.equal(none.finalized.get('balances'), 100);
  assert.equal(none.operations.finalized, 1);
});

function blobsBlock(number: number, txs: number[], finality = 'included') {
  return {
    block: { network: 'devnet', blockNumber: number, blockHash: hash(number), blobCount: txs.length, blobBaseFee: '1', finality },
    transactions: txs.map((t) => ({ network: 'devnet', blockNumber: number, blockHash: hash(number), txHash: hash(0x1000 + t), senderAddress: holder(t), blobCount: 1 })),
  };
}
const blockKey = (n: number) => `62${n.toString(16).padStart(16, '0')}`;

test('blobs: a block put lands in blocks and transactions; its undo deletes both; finality marks transactions by column only', () => {
  const collections = new Set(['blocks', 'transactions', 'schedule']);
  const plan = planPage([
    envelope(11, 'apply', 'blobs.block.put', blockKey(7), blobsBlock(7, [1, 2]), 7),
    envelope(12, 'apply', 'blobs.block.put', blockKey(8), blobsBlock(8, [3]), 8),
    envelope(13, 'undo', 'blobs.block.delete', blockKey(8), blobsBlock(8, [3]), 8),
    finalized(14, 7, 'blobs.block.put'),
  ], BLOBS_MAPPING, collections, fresh(10));
  const blocks = plan.tables.get('blocks')!;
  const transactions = plan.tables.get('transactions')!;
  assert.deepEqual([...blocks.upserts.keys()], [blockKey(7)]);
  assert.deepEqual([...blocks.deletes], [blockKey(8)]);
  assert.deepEqual([...transactions.upserts.keys()].sort(), [transactionKey(hash(0x1001)), transactionKey(hash(0x1002))].sort());
  assert.deepEqual([...transactions.deletes], [transactionKey(hash(0x1003))]);
  assert.equal(blocks.upserts.get(blockKey(7))!.data.finality, 'finalized');
  const tx = transactions.upserts.get(transactionKey(hash(0x1001)))!;
  assert.equal(tx.finality, 'finalized');
  assert.equal(tx.data.finality, undefined, 'a transaction\'s JSON has no finality field');
  assert.equal(blocks.finalizedThrough, 7);
  assert.equal(plan.tables.get('schedule')!.finalizedThrough, 7);
});

test('blobs: changes a collection\'s snapshot already held (at or below its boundary) are skipped for that table only', () => {
  const plan = planPage([envelope(14, 'apply', 'blobs.block.put', blockKey(9), blobsBlock(9, [4]), 9), envelope(15, 'apply', 'blobs.block.put', blockKey(10), blobsBlock(10, [5]), 10)],
    BLOBS_MAPPING, new Set(['blocks', 'transactions']), fresh(13, { blocks: 15, transactions: 13, schedule: 13 }));
  assert.equal(plan.tables.get('blocks'), undefined, 'the blocks snapshot held both');
  assert.equal(plan.tables.get('transactions')!.upserts.size, 2);
  assert.deepEqual(plan.last, { sequence: 15n, cursor: 'c15' });
});

test('collections the sink does not land are ignored; a change kind the mapping does not know is refused', () => {
  const plan = planPage([envelope(11, 'apply', 'blobs.block.put', blockKey(7), blobsBlock(7, [1]), 7)], BLOBS_MAPPING, new Set(['blocks']), fresh(10));
  assert.deepEqual([...plan.tables.keys()], ['blocks']);
  assert.throws(() => planPage([envelope(11, 'apply', 'erc20.allowance.put', 'aa', {}, 7)], ERC20_MAPPING, new Set(['balances']), fresh(10)), UnknownChangeError);
});

test('a declared mapping: put rows with their block and finality read from the row JSON, delete removes, another change kind is refused', () => {
  const mapping = declaredMapping('custom', 'gas-stats.v1', [{ collection: 'blocks', put: 'gas_stats.block.put', delete: 'gas_stats.block.delete', block_number: 'blockNumber', block_hash: 'meta.hash', finality: 'finality', columns: [{ name: 'gas_used', type: 'numeric', field: 'gasUsed' }], indexes: ['gas_used'] }]);
  assert.deepEqual(mapping.collections[0]!.columns, [{ name: 'gas_used', type: 'numeric', expression: "(data #>> '{gasUsed}')::numeric" }]);
  const row = { blockNumber: 7, meta: { hash: hash(7) }, gasUsed: '21000', finality: 'included' };
  const plan = planPage([
    envelope(11, 'apply', 'gas_stats.block.put', '0a07', row, 7),
    envelope(12, 'apply', 'gas_stats.block.put', '0a08', { ...row, blockNumber: 8 }, 8),
    envelope(13, 'undo', 'gas_stats.block.delete', '0a08', { ...row, blockNumber: 8 }, 8),
    finalized(14, 7, 'gas_stats.block.finalized'),
  ], mapping, new Set(['blocks']), fresh(10));
  const ops = plan.tables.get('blocks')!;
  const written = ops.upserts.get('0a07')!;
  assert.equal(written.blockNumber, 7);
  assert.equal(written.blockHash, hash(7));
  assert.equal(written.finality, 'finalized', 'finalized in the batch: column and JSON');
  assert.equal(written.data.finality, 'finalized');
  assert.deepEqual([...ops.deletes], ['0a08']);
  assert.throws(() => planPage([envelope(11, 'apply', 'gas_stats.other', '0a09', row, 9)], mapping, new Set(['blocks']), fresh(10)), UnknownChangeError);
});
