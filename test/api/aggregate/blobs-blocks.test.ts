import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockKey } from '../../../actors/kinds/blobs/keys.js';
import { renderBlock } from '../../../actors/kinds/blobs/render.js';
import { BLOBS, getJson, startListener, type ErrorShape } from './listener-fixture.js';
import { blobsBlock, seedBlocks, setProgress } from './store-fixture.js';

const CANONICAL = '/v1/processors/blobs/query/blobs';
/** Covered: 100..129 and 140..149 (a gap at 130..139); finalized through 109. */
const COVERED = [...Array.from({ length: 30 }, (_, i) => 100 + i), ...Array.from({ length: 10 }, (_, i) => 140 + i)];

async function seed({ store }: { store: import('../../../store/store.js').Store }): Promise<void> {
  await seedBlocks(store, BLOBS.instance, COVERED.map((n) => ({ block: blobsBlock(n, n <= 109 ? 'finalized' : 'included') })));
  await setProgress(store, BLOBS.instance, { finalizedNumber: 109, configuredStartBlock: 100, state: 'live' });
}

interface BlockPage {
  data: Array<{ blockNumber: number; finality: string }>;
  nextCursor: string | null;
  coverage: { requested?: { fromBlock: number; toBlock: number }; available: unknown[] };
}

const rowsOf = (numbers: readonly number[]) => numbers.map((n) => renderBlock(blobsBlock(n, n <= 109 ? 'finalized' : 'included')).toString('utf8'));

test('a block range is a Page of the stored BlobsBlock bytes in block order, with the requested interval in coverage', async (t) => {
  const node = await startListener(t, seed);
  const response = await fetch(`${node.base}${CANONICAL}/blocks?fromBlock=105&toBlock=112&limit=50`);
  assert.equal(response.status, 200);
  const text = await response.text();
  const numbers = [105, 106, 107, 108, 109, 110, 111, 112];
  assert.ok(text.startsWith(`{"data":[${rowsOf(numbers).join(',')}],"nextCursor":null,"coverage":`), 'rows are the stored bytes exactly');
  const body = JSON.parse(text) as BlockPage;
  assert.deepEqual(body.coverage.requested, { fromBlock: 105, toBlock: 112 });
  assert.deepEqual(body.data.map((b) => b.finality), ['finalized', 'finalized', 'finalized', 'finalized', 'finalized', 'included', 'included', 'included']);
  const alias = await fetch(`${node.base}/v1/q/blobs/blocks?fromBlock=105&toBlock=112&limit=50`);
  assert.equal(await alias.text(), text, 'the /v1/q alias serves the same bytes');
});

test('nextCursor pages through the resolved range once; page tokens are opaque and keep the range', async (t) => {
  const node = await startListener(t, seed);
  const seen: number[] = [];
  const tokens: string[] = [];
  let path = `${CANONICAL}/blocks?fromBlock=100&toBlock=129&limit=7`;
  for (;;) {
    const { status, body } = await getJson<BlockPage>(node.base, path);
    assert.equal(status, 200);
    assert.deepEqual(body.coverage.requested, { fromBlock: 100, toBlock: 129 }, 'every page reports the range of the first');
    seen.push(...body.data.map((b) => b.blockNumber));
    if (body.nextCursor === null) break;
    tokens.push(body.nextCursor);
    path = `${CANONICAL}/blocks?cursor=${body.nextCursor}&limit=7`;
  }
  assert.deepEqual(seen, Array.from({ length: 30 }, (_, i) => 100 + i));
  for (const token of tokens) {
    assert.match(token, /^[A-Za-z0-9_-]+$/);
    assert.ok(!/1[0-2][0-9]/.test(Buffer.from(token, 'base64url').toString('latin1')), 'no block number in readable form');
  }
  const implicit = await getJson<BlockPage>(node.base, `${CANONICAL}/blocks?limit=50`);
  assert.deepEqual(implicit.body.data.map((b) => b.blockNumber), COVERED, 'no bounds: every retained row, gaps allowed');
  assert.equal(implicit.body.coverage.requested, undefined);
});

test('tampered, foreign or conflicting page tokens are refused', async (t) => {
  const node = await startListener(t, seed, { processors: [BLOBS, { ...BLOBS, id: 'blobs2', instance: 'blobs2@1' }] });
  const { body } = await getJson<BlockPage>(node.base, `${CANONICAL}/blocks?fromBlock=100&toBlock=129&limit=5`);
  const token = body.nextCursor!;
  const bytes = Buffer.from(token, 'base64url');
  bytes[bytes.length - 12]! ^= 0x01;
  const tampered = bytes.toString('base64url');
  for (const [cursor, code] of [[tampered, 'cursor_invalid'], ['AAAA', 'cursor_invalid'], ['***', 'cursor_invalid']] as const) {
    const response = await getJson<ErrorShape>(node.base, `${CANONICAL}/blocks?cursor=${encodeURIComponent(cursor)}`);
    assert.deepEqual([response.status, response.body.error.code], [400, code], cursor);
  }
  const foreign = await getJson<ErrorShape>(node.base, `/v1/processors/blobs2/query/blobs/blocks?cursor=${token}`);
  assert.deepEqual([foreign.status, foreign.body.error.code], [400, 'cursor_invalid'], 'a token of another instance');
  const conflicting = await getJson<ErrorShape>(node.base, `${CANONICAL}/blocks?cursor=${token}&fromBlock=101`);
  assert.deepEqual([conflicting.status, conflicting.body.error.code], [400, 'invalid_request']);
  const same = await getJson<BlockPage>(node.base, `${CANONICAL}/blocks?cursor=${token}&fromBlock=100&toBlock=129&limit=5`);
  assert.deepEqual(same.body.data.map((b) => b.blockNumber), [105, 106, 107, 108, 109]);
});

test('explicit bounds over a gap are 409 range_incomplete with the interval and coverage; allowPartial returns the covered rows', async (t) => {
  const node = await startListener(t, seed);
  const refused = await getJson<ErrorShape>(node.base, `${CANONICAL}/blocks?fromBlock=125&toBlock=145`);
  assert.equal(refused.status, 409);
  assert.equal(refused.body.error.code, 'range_incomplete');
  assert.deepEqual(refused.body.error.details?.requested, { fromBlock: 125, toBlock: 145 });
  const coverage = refused.body.error.details?.coverage as { requested: unknown; available: Array<{ fromBlock: number; toBlock: number }> };
  assert.deepEqual(coverage.requested, { fromBlock: 125, toBlock: 145 });
  assert.deepEqual(coverage.available.map((a) => [a.fromBlock, a.toBlock]), [[100, 109], [110, 129], [140, 149]]);
  const partial = await getJson<BlockPage>(node.base, `${CANONICAL}/blocks?fromBlock=125&toBlock=145&allowPartial=true`);
  assert.equal(partial.status, 200);
  assert.deepEqual(partial.body.data.map((b) => b.blockNumber), [125, 126, 127, 128, 129, 140, 141, 142, 143, 144]);
  assert.deepEqual(partial.body.coverage.requested, { fromBlock: 125, toBlock: 145 });
  const second = await getJson<BlockPage>(node.base, `${CANONICAL}/blocks?cursor=${partial.body.nextCursor}`);
  assert.deepEqual(second.body.data.map((b) => b.blockNumber), [145], 'the token keeps allowPartial');
  const future = await getJson<ErrorShape>(node.base, `${CANONICAL}/blocks?fromBlock=140`);
  assert.equal(future.status, 200, 'fromBlock alone extends to the last covered block');
  const beyond = await getJson<ErrorShape>(node.base, `${CANONICAL}/blocks?fromBlock=150`);
  assert.deepEqual([beyond.status, beyond.body.error.code], [409, 'range_incomplete'], 'a range past coverage is never an empty success');
});

test('range and parameter limits: over max_block_range is 413, inverted or malformed bounds are 400', async (t) => {
  const node = await startListener(t, seed);
  const wide = await getJson<ErrorShape>(node.base, `${CANONICAL}/blocks?fromBlock=0&toBlock=100`);
  assert.deepEqual([wide.status, wide.body.error.code, wide.body.error.details?.maxBlockRange], [413, 'query_too_expensive', 100]);
  const big = await getJson<ErrorShape>(node.base, `${CANONICAL}/blocks?limit=51`);
  assert.deepEqual([big.status, big.body.error.code], [413, 'query_too_expensive']);
  for (const query of ['fromBlock=120&toBlock=110', 'fromBlock=-1', 'toBlock=1e3', 'fromBlock=0x10', 'allowPartial=yes']) {
    const response = await getJson<ErrorShape>(node.base, `${CANONICAL}/blocks?${query}`);
    assert.deepEqual([response.status, response.body.error.code], [400, 'invalid_request'], query);
  }
});

test('one block: the stored bytes; outside coverage 409; covered without a row 404; malformed 400', async (t) => {
  const node = await startListener(t, async (temp) => {
    await seed(temp);
    await temp.store.write(() => temp.store.processor(BLOBS.instance).entities.remove(blockKey(121)));
  });
  const response = await fetch(`${node.base}${CANONICAL}/blocks/120`);
  assert.equal(response.status, 200);
  assert.equal(await response.text(), rowsOf([120])[0]);
  assert.equal(await (await fetch(`${node.base}/v1/q/blobs/blocks/120`)).text(), rowsOf([120])[0]);
  const gap = await getJson<ErrorShape>(node.base, `${CANONICAL}/blocks/135`);
  assert.deepEqual([gap.status, gap.body.error.code, gap.body.error.details?.requested], [409, 'range_incomplete', { fromBlock: 135, toBlock: 135 }]);
  const missing = await getJson<ErrorShape>(node.base, `${CANONICAL}/blocks/121`);
  assert.deepEqual([missing.status, missing.body.error.code], [404, 'not_found']);
  const bad = await getJson<ErrorShape>(node.base, `${CANONICAL}/blocks/abc`);
  assert.deepEqual([bad.status, bad.body.error.code], [400, 'invalid_request']);
});
