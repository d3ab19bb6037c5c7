import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventSource } from 'eventsource';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const FAST = ['devnet.block_time_ms=150', 'devnet.reorg_every=8', 'devnet.reorg_depth=2', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'sse.heartbeat_seconds=1'];
const TOML = ['[[processors]]', 'id = "erc20"', 'kind = "erc20"', 'tokens = "*"', 'checkpoint_every_blocks = 4', 'checkpoints_retained = 2', '[[processors]]', 'id = "amm"', 'kind = "amm"', 'pools = "*"', ''].join('\n');

interface Row { token: string; address: string; balance: string; lastChange: { blockNumber: number; blockHash: string; timestamp: number }; finality: string }
interface Envelope { sequence: string; operation: string; kind: string; key: string | null; block: { number: number } | null; data: Row | null }
interface PoolRow { pool: string; reserve0: string; reserve1: string; swapCount: string; lastChange: { blockNumber: number; blockHash: string; timestamp: number }; finality: string }

/** Follows the erc20 stream with the eventsource package, collecting frames; `until` waits for a condition over them. */
function follow(url: string, received: Envelope[], timeoutMs = 120_000): { source: EventSource; until: (check: () => boolean) => Promise<void> } {
  const source = new EventSource(url);
  const waiters: Array<{ check: () => boolean; resolve: () => void }> = [];
  for (const name of ['apply', 'undo', 'finalized']) {
    source.addEventListener(name, (event) => {
      received.push(JSON.parse(event.data) as Envelope);
      for (const waiter of [...waiters]) if (waiter.check()) { waiters.splice(waiters.indexOf(waiter), 1); waiter.resolve(); }
    });
  }
  const until = (check: () => boolean) => new Promise<void>((resolve, reject) => {
    if (check()) return resolve();
    const timer = setTimeout(() => reject(new Error(`stream condition not met after ${received.length} frames`)), timeoutMs);
    waiters.push({ check, resolve: () => { clearTimeout(timer); resolve(); } });
  });
  return { source, until };
}

/** The materialized view a consumer keeps: puts set the row, deletes remove it, `finalized` marks rows at or below its block. */
function view<R extends { lastChange: { blockNumber: number }; finality: string }>(envelopes: readonly Envelope[], prefix: string): Map<string, R> {
  const rows = new Map<string, R>();
  for (const e of envelopes) {
    if (e.kind === `${prefix}.put`) rows.set(e.key!, e.data as unknown as R);
    else if (e.kind === `${prefix}.delete`) rows.delete(e.key!);
    else if (e.operation === 'finalized') {
      for (const [key, row] of rows) if (row.lastChange.blockNumber <= e.block!.number) rows.set(key, { ...row, finality: 'finalized' });
    }
  }
  return rows;
}

type Entity = { key: string; timestamp: number | null; finality: string | null; data: { lastChange: { timestamp: number; blockNumber: number; blockHash: string } } };

/**
 * Rows carry their last change's block timestamp: a timestamp filter on the generic entity route
 * selects the rows of that second, and it is the block's own timestamp (read over JSON-RPC). A row
 * may change between the reads (its holder moves again): then another is tried.
 */
async function checkTimestamps(node: NodeProcess, collection: string): Promise<void> {
  const entities = `${node.baseUrl}/v1/processors/${collection}/entities`;
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const listing = await (await fetch(`${entities}?limit=500`)).json() as { data: Entity[] };
    const row = listing.data[attempt % Math.max(1, listing.data.length)];
    if (!row) continue;
    const { blockNumber, blockHash, timestamp } = row.data.lastChange;
    assert.equal(row.timestamp, timestamp, 'the entity result\'s timestamp is its row\'s last change');
    const block = await (await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: [`0x${blockNumber.toString(16)}`, false] }) })).json() as { result: { hash: string; timestamp: string } };
    // A row of a block reorged away since the listing: try again.
    if (block.result.hash !== blockHash) continue;
    assert.equal(timestamp, Number(block.result.timestamp), 'the row\'s timestamp is its last change block\'s');
    const response = await fetch(`${entities}?fromTimestamp=${timestamp}&toTimestamp=${timestamp}&limit=500`);
    const page = await response.json() as { data: Entity[] };
    assert.equal(response.status, 200, JSON.stringify(page));
    for (const entity of page.data) {
      assert.equal(entity.timestamp, timestamp);
      assert.equal(entity.data.lastChange.timestamp, timestamp);
    }
    if (!page.data.some((e) => e.key === row.key)) continue;
    const none = await (await fetch(`${entities}?fromTimestamp=1&toTimestamp=2`)).json() as { data: unknown[] };
    assert.equal(none.data.length, 0, 'a window before the chain matches nothing');
    return;
  }
  assert.fail(`${collection}: no row stayed put long enough to be found by its timestamp`);
}

async function snapshot<R>(node: NodeProcess, collection: string): Promise<{ rows: Map<string, R>; boundary: bigint }> {
  const rows = new Map<string, R>();
  const base = `${node.baseUrl}/v1/processors/${collection}/query-and-follow`;
  let body: Record<string, unknown> = { limit: 500 };
  let boundary = -1n;
  for (;;) {
    const response = await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const page = await response.json() as { data: Array<{ key: string; data: R }>; nextCursor: string | null; changeBoundary: { sequence: string } };
    assert.equal(response.status, 200, JSON.stringify(page));
    if (boundary < 0n) boundary = BigInt(page.changeBoundary.sequence);
    for (const entity of page.data) rows.set(entity.key, entity.data);
    if (page.nextCursor === null) return { rows, boundary };
    body = { cursor: page.nextCursor, limit: 500 };
  }
}

test('erc20 and amm over the devnet: stream consumers follow balances and pools across a reorg and their views equal the node at a snapshot boundary; tokens conserve; typed routes answer and refuse bad input', async (t) => {
  const node = await startNodeProcess({ toml: TOML, sets: FAST, readyTimeoutMs: 120_000 });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  const received: Envelope[] = [];
  const { source, until } = follow(`${node.baseUrl}/v1/processors/erc20/stream`, received);
  t.after(() => source.close());
  const poolFrames: Envelope[] = [];
  const pools = follow(`${node.baseUrl}/v1/processors/amm/stream`, poolFrames);
  t.after(() => pools.source.close());

  // An undo, then a finalized frame past the undone block.
  await until(() => {
    const undo = received.findIndex((e) => e.operation === 'undo');
    return undo >= 0 && received.slice(undo).some((e) => e.operation === 'finalized' && e.block!.number > received[undo]!.block!.number);
  });
  const undos = received.filter((e) => e.operation === 'undo');
  assert.ok(undos.every((e) => e.kind === 'erc20.balance.put' || e.kind === 'erc20.balance.delete'), 'undo frames restore balances');

  const { rows, boundary } = await snapshot<Row>(node, 'erc20/collections/balances');
  await until(() => received.some((e) => BigInt(e.sequence) >= boundary));
  const consumer = view<Row>(received.filter((e) => BigInt(e.sequence) <= boundary), 'erc20.balance');
  assert.deepEqual(new Map([...consumer].sort()), new Map([...rows].sort()), 'the stream consumer\'s view equals the snapshot at its boundary');

  await checkTimestamps(node, 'erc20/collections/balances');
  const perToken = new Map<string, bigint>();
  for (const row of rows.values()) perToken.set(row.token, (perToken.get(row.token) ?? 0n) + BigInt(row.balance));
  assert.ok(perToken.size >= 3, 'the devnet tokens move');
  for (const [token, total] of perToken) assert.ok(total > 0n, `${token}: the holders' balances sum to the minted supply (${total})`);
  for (const row of rows.values()) {
    assert.notEqual(row.address, `0x${'00'.repeat(20)}`, 'the zero address is no holder');
    assert.ok(BigInt(row.balance) > 0n, `a balance from genesis is never negative: ${JSON.stringify(row)}`);
  }

  // The typed route agrees with the entity rows, and reports exactness from genesis coverage.
  const [key, row] = [...rows].find(([, r]) => r.address !== `0x${'00'.repeat(20)}`)!;
  const answer = await (await fetch(`${node.baseUrl}/v1/q/erc20/balances/${row.token}/${row.address}`)).json() as {
    balance: string | null; exact: boolean; coverage: { processedThrough: number; liveHeadBlock: number; reduceCursor: { number: number; hash: string } | null; pendingThrough: number | null; seededFromCheckpoint: boolean };
  };
  assert.equal(answer.exact, true);
  const coverage = answer.coverage;
  assert.ok(coverage.reduceCursor !== null && /^0x[0-9a-f]{64}$/.test(coverage.reduceCursor.hash), 'ordered-state coverage carries the reduce cursor');
  assert.equal(coverage.reduceCursor.number, coverage.processedThrough, 'the state reflects the last processed block');
  // One answer reads one snapshot: either the state reflects the live head, or the blocks through the head are pending.
  if (coverage.pendingThrough === null) assert.equal(coverage.reduceCursor.number, coverage.liveHeadBlock, JSON.stringify(coverage));
  else assert.equal(coverage.pendingThrough, coverage.liveHeadBlock, JSON.stringify(coverage));
  assert.equal(coverage.seededFromCheckpoint, false);
  assert.ok(answer.balance !== null && /^[0-9]+$/.test(answer.balance), key);
  // amm: its own stream saw the same reorg; its view equals its snapshot; V2 reserves equal the pair's token balances.
  await pools.until(() => poolFrames.some((e) => e.operation === 'undo'));
  const poolSnapshot = await snapshot<PoolRow>(node, 'amm/collections/pools');
  await pools.until(() => poolFrames.some((e) => BigInt(e.sequence) >= poolSnapshot.boundary));
  const poolView = view<PoolRow>(poolFrames.filter((e) => BigInt(e.sequence) <= poolSnapshot.boundary), 'amm.pool');
  assert.deepEqual(new Map([...poolView].sort()), new Map([...poolSnapshot.rows].sort()));
  assert.equal(poolSnapshot.rows.size, 3, 'the devnet has three pairs');
  await checkTimestamps(node, 'amm/collections/pools');
  for (const pool of poolSnapshot.rows.values()) {
    const answer = await fetch(`${node.baseUrl}/v1/q/amm/pools/${pool.pool}`);
    assert.equal(answer.status, 200);
    const body = await answer.json() as PoolRow & { coverage: { reduceCursor: unknown } };
    assert.ok(/^[0-9]+$/.test(body.reserve0) && /^[0-9]+$/.test(body.reserve1) && BigInt(body.swapCount) > 0n, JSON.stringify(body));
    assert.ok(body.coverage.reduceCursor !== null);
  }
  assert.equal((await fetch(`${node.baseUrl}/v1/q/amm/pools/0x${'11'.repeat(20)}`)).status, 404);
  assert.equal((await fetch(`${node.baseUrl}/v1/q/amm/pools/0x12`)).status, 400);

  // Automatic checkpoints: every 4 finalized blocks, the newest 2 kept; restoring an older one than the current is refused (restore itself: e2e/checkpoints-savepoints).
  type Checkpoints = { data: Array<{ checkpoint: string; blockNumber: number; rowCount: number; digest: string }> };
  type Refusal = { error: { code: string; message: string; retryable: boolean; details: { currentCheckpoint: string }; requestId: string } };
  let checkpoints: Checkpoints['data'] = [];
  const listTwo = () => waitUntil(node, async () => {
    checkpoints = ((await (await fetch(`${node.baseUrl}/v1/processors/erc20/checkpoints`)).json()) as Checkpoints).data;
    return checkpoints.length === 2;
  }, 60_000);
  // A checkpoint is taken every 600 ms here, so between listing and restoring the older one may be
  // pruned (404) or the newest superseded (another current one): list again and retry until the
  // answer is about the checkpoints just listed.
  let refused: Response | undefined;
  let refusal: Refusal | undefined;
  for (let attempt = 0; attempt < 50; attempt += 1) {
    await listTwo();
    assert.ok(checkpoints.every((c) => c.blockNumber % 4 === 0 && c.rowCount > 0 && /^[0-9a-f]{64}$/.test(c.digest)), JSON.stringify(checkpoints));
    assert.ok(checkpoints[0]!.blockNumber > checkpoints[1]!.blockNumber, 'newest first');
    refused = await fetch(`${node.baseUrl}/v1/processors/erc20/checkpoints/${checkpoints[1]!.checkpoint}/restore`, { method: 'POST' });
    refusal = await refused.json() as Refusal;
    if (refused.status === 409 && refusal.error.details.currentCheckpoint === checkpoints[0]!.checkpoint) break;
    assert.ok(refused.status === 404 || refused.status === 409, `${refused.status} ${JSON.stringify(refusal)}`);
  }
  assert.equal(refused!.status, 409, JSON.stringify(refusal));
  assert.equal(refusal!.error.code, 'conflict');
  assert.equal(refusal!.error.retryable, false);
  assert.ok(refusal!.error.details.currentCheckpoint === checkpoints[0]!.checkpoint && typeof refusal!.error.requestId === 'string', JSON.stringify(refusal));
  assert.equal((await fetch(`${node.baseUrl}/v1/processors/erc20/checkpoints/x1/restore`, { method: 'POST' })).status, 400);
  assert.equal((await fetch(`${node.baseUrl}/v1/processors/erc20/checkpoints/3/restore`, { method: 'POST' })).status, 404);

  const bad = await fetch(`${node.baseUrl}/v1/q/erc20/balances/${row.token}/nope`);
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { error: { code: string } }).error.code, 'invalid_request');
});
