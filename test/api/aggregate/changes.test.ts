import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeCursor } from '../../../store/cursor.js';
import { BLOBS, getJson, startListener, type ErrorShape } from './listener-fixture.js';
import { appendChanges, blobsBlock, CHAIN_ID, pruneChanges, seedBlocks, type WrittenChange } from './store-fixture.js';
import { damagedToken } from '../../support/tokens.js';

const QUIET = { ...BLOBS, id: 'quiet', instance: 'quiet@1', delivery: false };

async function withChanges(t: import('node:test').TestContext, count: number, overrides = {}) {
  let written: WrittenChange[] = [];
  const node = await startListener(t, async ({ store }) => {
    await seedBlocks(store, BLOBS.instance, [{ block: blobsBlock(1) }, { block: blobsBlock(2) }]);
    written = await appendChanges(store, BLOBS.instance, 0n, count);
  }, overrides);
  return { node, written };
}

function expectedPage(changes: readonly WrittenChange[], nextCursor: string | null): string {
  return `{"data":[${changes.map((c) => c.json).join(',')}],"nextCursor":${JSON.stringify(nextCursor)},"coverage":`;
}

test('change pages are the stored envelope bytes, concatenated, and nextCursor walks the log once in order', async (t) => {
  const { node, written } = await withChanges(t, 23);
  const seen: string[] = [];
  let after: string | null = null;
  for (let page = 0; page < 5; page += 1) {
    const response = await fetch(`${node.base}/v1/processors/blobs/changes?limit=10${after ? `&after=${after}` : ''}`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json');
    const text = await response.text();
    const slice = written.slice(page * 10, page * 10 + 10);
    const next = slice.length === 10 ? slice[9]!.cursor : null;
    assert.ok(text.startsWith(expectedPage(slice, next)), `page ${page} is the stored bytes exactly`);
    const body = JSON.parse(text) as { data: Array<{ sequence: string; cursor: string }>; nextCursor: string | null; coverage: { chainId: number } };
    assert.equal(body.coverage.chainId, CHAIN_ID);
    seen.push(...body.data.map((e) => e.sequence));
    if (body.nextCursor === null) break;
    after = body.nextCursor;
  }
  assert.deepEqual(seen, written.map((c) => c.sequence.toString()));
});

test('a page that is not full has nextCursor null; the last envelope cursor resumes after it', async (t) => {
  const { node, written } = await withChanges(t, 5);
  const first = await getJson<{ data: unknown[]; nextCursor: string | null }>(node.base, '/v1/processors/blobs/changes');
  assert.equal(first.body.data.length, 5);
  assert.equal(first.body.nextCursor, null);
  const rest = await getJson<{ data: unknown[]; nextCursor: string | null }>(node.base, `/v1/processors/blobs/changes?after=${written[4]!.cursor}`);
  assert.deepEqual(rest.body.data, []);
  assert.equal(rest.body.nextCursor, null);
  const middle = await fetch(`${node.base}/v1/processors/blobs/changes?after=${written[1]!.cursor}`);
  assert.ok((await middle.text()).startsWith(expectedPage(written.slice(2), null)));
});

test('the change head is a decimal sequence with the cursor of the head change and coverage', async (t) => {
  const { node, written } = await withChanges(t, 7);
  const { status, body } = await getJson<{ sequence: string; cursor: string | null; coverage: { available: unknown[] } }>(node.base, '/v1/processors/blobs/changes/head');
  assert.equal(status, 200);
  assert.equal(body.sequence, '7');
  assert.equal(body.cursor, written[6]!.cursor);
  assert.deepEqual(body.coverage.available, [{ fromBlock: 1, toBlock: 2, finality: 'included' }]);
});

test('an empty log has head sequence "0", cursor null and an empty page', async (t) => {
  const node = await startListener(t, async () => {});
  const head = await getJson<{ sequence: string; cursor: string | null }>(node.base, '/v1/processors/blobs/changes/head');
  assert.deepEqual([head.status, head.body.sequence, head.body.cursor], [200, '0', null]);
  const page = await getJson<{ data: unknown[]; nextCursor: string | null }>(node.base, '/v1/processors/blobs/changes');
  assert.deepEqual([page.status, page.body.data, page.body.nextCursor], [200, [], null]);
});

test('without after the page starts at the earliest retained change; a cursor below the tail is 410 cursor_expired', async (t) => {
  let written: WrittenChange[] = [];
  const node = await startListener(t, async ({ store }) => {
    written = await appendChanges(store, BLOBS.instance, 0n, 8);
    await pruneChanges(store, BLOBS.instance, 3n);
  });
  const page = await getJson<{ data: Array<{ sequence: string }> }>(node.base, '/v1/processors/blobs/changes');
  assert.deepEqual(page.body.data.map((e) => e.sequence), ['4', '5', '6', '7', '8']);
  const atTail = await getJson<{ data: Array<{ sequence: string }> }>(node.base, `/v1/processors/blobs/changes?after=${written[2]!.cursor}`);
  assert.equal(atTail.status, 200, 'the cursor of the last pruned change still resumes: its successor is retained');
  assert.equal(atTail.body.data[0]!.sequence, '4');
  const expired = await getJson<ErrorShape>(node.base, `/v1/processors/blobs/changes?after=${written[1]!.cursor}`);
  assert.equal(expired.status, 410);
  assert.equal(expired.body.error.code, 'cursor_expired');
  assert.equal(expired.body.error.details?.retainedFrom, '4');
});

test('cursors of another store epoch, chain or instance are 410 reset_required; damaged or future ones 400 cursor_invalid', async (t) => {
  const { node, written } = await withChanges(t, 3);
  const epoch = node.temp.store.epoch;
  const cases: Array<[string, number, string]> = [
    [encodeCursor({ epoch: epoch ^ 1n, chainId: CHAIN_ID, instance: BLOBS.instance, sequence: 1n }), 410, 'reset_required'],
    [encodeCursor({ epoch, chainId: 1, instance: BLOBS.instance, sequence: 1n }), 410, 'reset_required'],
    [encodeCursor({ epoch, chainId: CHAIN_ID, instance: 'other@1', sequence: 1n }), 410, 'reset_required'],
    [encodeCursor({ epoch, chainId: CHAIN_ID, instance: BLOBS.instance, sequence: 4n }), 400, 'cursor_invalid'],
    [damagedToken(written[0]!.cursor), 400, 'cursor_invalid'],
    ['not-a-cursor!', 400, 'cursor_invalid'],
  ];
  for (const [cursor, status, code] of cases) {
    const response = await getJson<ErrorShape>(node.base, `/v1/processors/blobs/changes?after=${encodeURIComponent(cursor)}`);
    assert.equal(response.status, status, cursor);
    assert.equal(response.body.error.code, code, cursor);
    assert.equal(response.body.error.retryable, false);
    assert.ok(!response.text.includes(cursor), 'the whole cursor is never echoed');
  }
});

test('limit: absent uses the configured default, over the maximum is 413 query_too_expensive, malformed is 400', async (t) => {
  const { node } = await withChanges(t, 30);
  const byDefault = await getJson<{ data: unknown[] }>(node.base, '/v1/processors/blobs/changes');
  assert.equal(byDefault.body.data.length, 10, 'default_page_limit');
  const max = await getJson<{ data: unknown[] }>(node.base, '/v1/processors/blobs/changes?limit=50');
  assert.equal(max.body.data.length, 30);
  const tooMany = await getJson<ErrorShape>(node.base, '/v1/processors/blobs/changes?limit=51');
  assert.deepEqual([tooMany.status, tooMany.body.error.code, tooMany.body.error.details?.maxPageLimit], [413, 'query_too_expensive', 50]);
  for (const bad of ['0', '-1', '2.5', 'ten', '']) {
    const response = await getJson<ErrorShape>(node.base, `/v1/processors/blobs/changes?limit=${bad}`);
    assert.deepEqual([response.status, response.body.error.code], [400, 'invalid_request'], `limit=${bad}`);
  }
});

test('delivery disabled: change head, change pages and the stream are 409 delivery_disabled and not retryable', async (t) => {
  const node = await startListener(t, async ({ store }) => {
    await appendChanges(store, QUIET.instance, 0n, 2);
  }, { processors: [BLOBS, QUIET] });
  for (const path of ['/changes/head', '/changes', '/stream']) {
    const { status, body } = await getJson<ErrorShape>(node.base, `/v1/processors/quiet${path}`);
    assert.equal(status, 409, path);
    assert.equal(body.error.code, 'delivery_disabled', path);
    assert.equal(body.error.retryable, false, path);
  }
  assert.equal((await fetch(`${node.base}/v1/processors/quiet/status`)).status, 200, 'status still works');
});
