import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockKey, txKey } from '../../../actors/kinds/blobs/keys.js';
import type { Store } from '../../../store/store.js';
import { BLOBS, getJson, startListener, type ErrorShape } from './listener-fixture.js';
import { appendChanges, blobsBlock, blobTransaction, scheduleRow, seedBlocks, seedSchedule, setProgress } from './store-fixture.js';
import { damagedToken } from '../../support/tokens.js';

const P = '/v1/processors/blobs';
/** Covered: 100..129 and 140..149 (a gap at 130..139); finalized through 109; two blob transactions per even block. */
const COVERED = [...Array.from({ length: 30 }, (_, i) => 100 + i), ...Array.from({ length: 10 }, (_, i) => 140 + i)];
const txsOf = (n: number) => (n % 2 === 0 ? [blobTransaction(n, 1), blobTransaction(n, 2)] : []);

async function seed({ store }: { store: Store }): Promise<void> {
  await seedBlocks(store, BLOBS.instance, COVERED.map((n) => ({ block: blobsBlock(n, n <= 109 ? 'finalized' : 'included'), transactions: txsOf(n) })));
  await seedSchedule(store, BLOBS.instance, [scheduleRow('cancun', 100, 1_700_001_200), scheduleRow('prague', null, 1_800_000_000)]);
  await setProgress(store, BLOBS.instance, { finalizedNumber: 109, configuredStartBlock: 100, state: 'live' });
  await appendChanges(store, BLOBS.instance, 0n, 5);
}

interface Entity {
  key: string;
  collection: string;
  schema: string;
  block: { number: number; hash: string } | null;
  timestamp: number | null;
  finality: string | null;
  data: Record<string, unknown>;
}

interface EntityPage {
  data: Entity[];
  nextCursor: string | null;
  coverage: { requested?: { fromBlock: number; toBlock: number }; available: unknown[] };
  snapshotId: string;
  changeBoundary: { sequence: string };
  boundaryCursor: string | null;
  recovery: { action: string; follow: { changes: string; stream: string } | null };
  retainedBounds: { fromBlock: number; toBlock: number } | null;
}

async function allPages(base: string, first: string): Promise<{ pages: EntityPage[]; rows: Entity[] }> {
  const pages: EntityPage[] = [];
  let path = first;
  for (;;) {
    const { status, body, text } = await getJson<EntityPage>(base, path);
    assert.equal(status, 200, text);
    pages.push(body);
    if (body.nextCursor === null) break;
    path = `${first.split('?')[0]}?cursor=${body.nextCursor}&limit=7`;
  }
  return { pages, rows: pages.flatMap((p) => p.data) };
}

test('collections lists the kind\'s collections with their retained bounds', async (t) => {
  const node = await startListener(t, seed);
  const { status, body } = await getJson<{ data: Array<{ name: string; schema: string; retainedBounds: unknown; entities: string }> }>(node.base, `${P}/collections`);
  assert.equal(status, 200);
  assert.deepEqual(body.data.map((c) => c.name), ['blocks', 'transactions', 'schedule']);
  assert.deepEqual(body.data.map((c) => c.retainedBounds), [{ fromBlock: 100, toBlock: 149 }, { fromBlock: 100, toBlock: 148 }, { fromBlock: 100, toBlock: 100 }]);
  assert.equal(body.data[0]!.schema, 'blobs.v1/BlobsBlock');
  assert.equal(body.data[0]!.entities, `${P}/collections/blocks/entities`);
  const unknown = await getJson<ErrorShape>(node.base, `${P}/collections/pools/entities`);
  assert.equal(unknown.status, 404);
});

test('entity pages carry decoded data, block metadata, a snapshot id, the change boundary and a followable cursor', async (t) => {
  const node = await startListener(t, seed);
  const { pages, rows } = await allPages(node.base, `${P}/collections/blocks/entities?limit=7`);
  assert.deepEqual(rows.map((r) => r.block!.number), COVERED, 'no bounds: every retained row, in block order, across pages');
  const first = rows[0]!;
  assert.equal(first.key, blockKey(100).toString('hex'));
  assert.equal(first.collection, 'blocks');
  assert.equal(first.schema, 'blobs.v1/BlobsBlock');
  assert.deepEqual(first.block, { number: 100, hash: blobsBlock(100).blockHash });
  assert.equal(first.timestamp, blobsBlock(100).timestamp);
  assert.equal(first.finality, 'finalized');
  assert.equal(rows.find((r) => r.block!.number === 120)!.finality, 'included');
  assert.equal(first.data.blobGasUsed, '262144', 'decoded data keeps lossless decimal strings');
  const page = pages[0]!;
  assert.equal(page.changeBoundary.sequence, '5');
  assert.equal(page.snapshotId, 'live-5');
  assert.deepEqual(page.retainedBounds, { fromBlock: 100, toBlock: 149 });
  assert.ok(page.boundaryCursor);
  assert.ok(page.recovery.follow);
  const follow = await getJson<{ data: unknown[] }>(node.base, page.recovery.follow.changes);
  assert.equal(follow.status, 200, 'recovery.follow.changes is a working route');
  assert.deepEqual(follow.body.data, [], 'nothing after the boundary yet');
  await appendChanges(node.temp.store, BLOBS.instance, 5n, 2);
  const after = await getJson<{ data: Array<{ sequence: string }> }>(node.base, `${P}/changes?after=${page.boundaryCursor}`);
  assert.deepEqual(after.body.data.map((c) => c.sequence), ['6', '7'], 'commits after the read follow the boundary');
});

test('block and timestamp bounds select rows; the transactions collection pages in block and index order', async (t) => {
  const node = await startListener(t, seed);
  const ranged = await getJson<EntityPage>(node.base, `${P}/collections/blocks/entities?fromBlock=104&toBlock=108`);
  assert.deepEqual(ranged.body.data.map((r) => r.block!.number), [104, 105, 106, 107, 108]);
  assert.deepEqual(ranged.body.coverage.requested, { fromBlock: 104, toBlock: 108 });
  const ts = blobsBlock(110).timestamp;
  const byTime = await getJson<EntityPage>(node.base, `${P}/collections/blocks/entities?fromTimestamp=${ts}&toTimestamp=${ts + 24}`);
  assert.deepEqual(byTime.body.data.map((r) => r.block!.number), [110, 111, 112]);
  const { rows } = await allPages(node.base, `${P}/collections/transactions/entities?fromBlock=100&toBlock=129&limit=7`);
  const expected = COVERED.filter((n) => n <= 129).flatMap((n) => txsOf(n).map((tx) => tx.txHash));
  assert.deepEqual(rows.map((r) => r.data.txHash), expected);
  assert.equal(rows[0]!.key, txKey(expected[0]!).toString('hex'));
  assert.equal(rows[0]!.timestamp, blobsBlock(100).timestamp, 'a transaction carries its block\'s timestamp and finality');
  const schedule = await getJson<EntityPage>(node.base, `${P}/collections/schedule/entities`);
  assert.deepEqual(schedule.body.data.map((r) => [r.data.name, r.block?.number ?? null]), [['cancun', 100], ['prague', null]]);
});

test('one entity by its URL-safe hex key; any other spelling is 400, an absent or foreign key 404', async (t) => {
  const node = await startListener(t, seed);
  const key = blockKey(105).toString('hex');
  const one = await getJson<{ data: Entity; changeBoundary: { sequence: string }; snapshotId: string; retainedBounds: unknown; coverage: unknown }>(node.base, `${P}/collections/blocks/entities/${key}`);
  assert.equal(one.status, 200);
  assert.equal(one.body.data.block!.number, 105);
  assert.equal(one.body.changeBoundary.sequence, '5');
  assert.ok(one.body.coverage && one.body.retainedBounds && one.body.snapshotId);
  const tx = blobTransaction(104, 1);
  const byHash = await getJson<{ data: Entity }>(node.base, `${P}/collections/transactions/entities/${txKey(tx.txHash).toString('hex')}`);
  assert.equal(byHash.body.data.data.txHash, tx.txHash);
  for (const bad of [`0x${key}`, blockKey(106).toString('hex').toUpperCase(), key.slice(1), 'zz', '%2F%2F', 'ab'.repeat(129)]) {
    const { status, body } = await getJson<ErrorShape>(node.base, `${P}/collections/blocks/entities/${bad}`);
    assert.equal(status, 400, bad);
    assert.equal(body.error.code, 'invalid_request');
  }
  assert.equal((await getJson(node.base, `${P}/collections/blocks/entities/${blockKey(135).toString('hex')}`)).status, 404, 'a block in the gap');
  assert.equal((await getJson(node.base, `${P}/collections/transactions/entities/${key}`)).status, 404, 'a key of another collection');
});

test('explicit bounds over a gap are 409 range_incomplete; below the retained window 409 output_not_retained; never an empty page', async (t) => {
  const node = await startListener(t, seed);
  const gap = await getJson<ErrorShape>(node.base, `${P}/collections/blocks/entities?fromBlock=125&toBlock=142`);
  assert.equal(gap.status, 409);
  assert.equal(gap.body.error.code, 'range_incomplete');
  assert.deepEqual(gap.body.error.details!.requested, { fromBlock: 125, toBlock: 142 });
  assert.ok((gap.body.error.details!.coverage as { available: unknown[] }).available.length >= 2);
  const ahead = await getJson<ErrorShape>(node.base, `${P}/collections/transactions/entities?fromBlock=149&toBlock=160`);
  assert.equal(ahead.body.error.code, 'range_incomplete', 'beyond the head is incomplete, not empty');
  const below = await getJson<ErrorShape>(node.base, `${P}/collections/blocks/entities?fromBlock=90&toBlock=104`);
  assert.equal(below.status, 409);
  assert.equal(below.body.error.code, 'output_not_retained');
  assert.equal(below.body.error.retryable, false);
  assert.equal(below.body.error.details!.action, 'rebuild or source scan');
  assert.equal(below.body.error.details!.retainedFrom, 100);
  const byTime = await getJson<EntityPage>(node.base, `${P}/collections/blocks/entities?fromTimestamp=0&toTimestamp=10`);
  assert.equal(byTime.status, 200, 'timestamp bounds select retained rows only and imply no completeness');
  assert.deepEqual(byTime.body.data, []);
});

test('output = none answers output_not_retained; delivery disabled answers entities with null boundaryCursor and recovery.follow', async (t) => {
  const processors = [
    BLOBS,
    { ...BLOBS, id: 'dark', output: 'none' as const },
    { ...BLOBS, id: 'quiet', delivery: false },
  ];
  const node = await startListener(t, seed, { processors });
  const dark = await getJson<ErrorShape>(node.base, '/v1/processors/dark/collections/blocks/entities');
  assert.equal(dark.status, 409);
  assert.equal(dark.body.error.code, 'output_not_retained');
  assert.equal(dark.body.error.details!.action, 'rebuild or source scan');
  const darkOne = await getJson<ErrorShape>(node.base, `/v1/processors/dark/collections/blocks/entities/${blockKey(100).toString('hex')}`);
  assert.equal(darkOne.body.error.code, 'output_not_retained');
  const quiet = await getJson<EntityPage>(node.base, '/v1/processors/quiet/collections/blocks/entities?limit=3');
  assert.equal(quiet.status, 200);
  assert.equal(quiet.body.data.length, 3);
  assert.equal(quiet.body.boundaryCursor, null);
  assert.equal(quiet.body.recovery.follow, null);
  assert.equal(quiet.body.changeBoundary.sequence, '5');
  const followRoutes: Array<[string, string]> = [
    ['POST', '/v1/processors/quiet/collections/blocks/query-and-follow'],
    ['GET', '/v1/processors/quiet/query/blobs/snapshot'],
    ['GET', '/v1/processors/quiet/changes/head'],
    ['GET', '/v1/processors/quiet/changes'],
    ['GET', '/v1/processors/quiet/stream'],
  ];
  for (const [method, path] of followRoutes) {
    const response = await fetch(`${node.base}${path}`, { method, headers: { accept: 'text/event-stream' } });
    const body = await response.json() as ErrorShape;
    assert.equal(response.status, 409, path);
    assert.equal(body.error.code, 'delivery_disabled', path);
    assert.equal(body.error.retryable, false);
  }
});

test('a page cursor is bound to its collection and range', async (t) => {
  const node = await startListener(t, seed);
  const first = await getJson<EntityPage>(node.base, `${P}/collections/blocks/entities?fromBlock=100&toBlock=120&limit=5`);
  const token = first.body.nextCursor!;
  const other = await getJson<ErrorShape>(node.base, `${P}/collections/transactions/entities?cursor=${token}`);
  assert.equal(other.status, 400);
  assert.equal(other.body.error.code, 'cursor_invalid');
  const conflicting = await getJson<ErrorShape>(node.base, `${P}/collections/blocks/entities?cursor=${token}&fromBlock=101`);
  assert.equal(conflicting.body.error.code, 'invalid_request');
  const damaged = await getJson<ErrorShape>(node.base, `${P}/collections/blocks/entities?cursor=${damagedToken(token)}`);
  assert.equal(damaged.body.error.code, 'cursor_invalid');
});
