import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventSource } from 'eventsource';
import { removeDir, startNodeProcess, type NodeProcess } from '../support/node-process.js';

const FAST = ['devnet.block_time_ms=150', 'devnet.reorg_every=8', 'devnet.reorg_depth=2', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'sse.heartbeat_seconds=1'];
const TOML = ['[[processors]]', 'id = "erc20"', 'kind = "erc20"', 'tokens = "*"', ''].join('\n');

interface Row { token: string; address: string; balance: string; lastChange: { blockNumber: number; blockHash: string }; finality: string }
interface Envelope { sequence: string; operation: string; kind: string; key: string | null; block: { number: number } | null; data: Row | null }

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
function view(envelopes: readonly Envelope[]): Map<string, Row> {
  const rows = new Map<string, Row>();
  for (const e of envelopes) {
    if (e.kind === 'erc20.balance.put') rows.set(e.key!, e.data!);
    else if (e.kind === 'erc20.balance.delete') rows.delete(e.key!);
    else if (e.operation === 'finalized') {
      for (const [key, row] of rows) if (row.lastChange.blockNumber <= e.block!.number) rows.set(key, { ...row, finality: 'finalized' });
    }
  }
  return rows;
}

async function snapshot(node: NodeProcess): Promise<{ rows: Map<string, Row>; boundary: bigint }> {
  const rows = new Map<string, Row>();
  const base = `${node.baseUrl}/v1/processors/erc20/collections/balances/query-and-follow`;
  let body: Record<string, unknown> = { limit: 500 };
  let boundary = -1n;
  for (;;) {
    const response = await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const page = await response.json() as { data: Array<{ key: string; data: Row }>; nextCursor: string | null; changeBoundary: { sequence: string } };
    assert.equal(response.status, 200, JSON.stringify(page));
    if (boundary < 0n) boundary = BigInt(page.changeBoundary.sequence);
    for (const entity of page.data) rows.set(entity.key, entity.data);
    if (page.nextCursor === null) return { rows, boundary };
    body = { cursor: page.nextCursor, limit: 500 };
  }
}

test('erc20 over the devnet: a stream consumer follows balances across a reorg and its view equals the node at a snapshot boundary; tokens conserve', async (t) => {
  const node = await startNodeProcess({ toml: TOML, sets: FAST, readyTimeoutMs: 120_000 });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  const received: Envelope[] = [];
  const { source, until } = follow(`${node.baseUrl}/v1/processors/erc20/stream`, received);
  t.after(() => source.close());

  // An undo, then a finalized frame past the undone block.
  await until(() => {
    const undo = received.findIndex((e) => e.operation === 'undo');
    return undo >= 0 && received.slice(undo).some((e) => e.operation === 'finalized' && e.block!.number > received[undo]!.block!.number);
  });
  const undos = received.filter((e) => e.operation === 'undo');
  assert.ok(undos.every((e) => e.kind === 'erc20.balance.put' || e.kind === 'erc20.balance.delete'), 'undo frames restore balances');

  const { rows, boundary } = await snapshot(node);
  await until(() => received.some((e) => BigInt(e.sequence) >= boundary));
  const consumer = view(received.filter((e) => BigInt(e.sequence) <= boundary));
  assert.deepEqual(new Map([...consumer].sort()), new Map([...rows].sort()), 'the stream consumer\'s view equals the snapshot at its boundary');

  const perToken = new Map<string, bigint>();
  for (const row of rows.values()) perToken.set(row.token, (perToken.get(row.token) ?? 0n) + BigInt(row.balance));
  assert.ok(perToken.size >= 3, 'the devnet tokens move');
  for (const [token, total] of perToken) assert.equal(total, 0n, `every transfer of ${token} moves value, none is created: holders (the zero address minting included) sum to zero`);

  // The typed route agrees with the entity rows, and reports exactness from genesis coverage.
  const [key, row] = [...rows].find(([, r]) => r.address !== `0x${'00'.repeat(20)}`)!;
  const answer = await (await fetch(`${node.baseUrl}/v1/q/erc20/balances/${row.token}/${row.address}`)).json() as {
    balance: string | null; exact: boolean; coverage: { processedThrough: number; reduceCursor: { number: number; hash: string } | null; pendingThrough: number | null; seededFromCheckpoint: boolean };
  };
  assert.equal(answer.exact, true);
  const coverage = answer.coverage;
  assert.ok(coverage.reduceCursor !== null && /^0x[0-9a-f]{64}$/.test(coverage.reduceCursor.hash), 'ordered-state coverage carries the reduce cursor');
  assert.equal(coverage.reduceCursor.number, coverage.processedThrough, 'the state reflects the last processed block');
  assert.equal(coverage.pendingThrough, coverage.reduceCursor.number);
  assert.equal(coverage.seededFromCheckpoint, false);
  assert.ok(answer.balance !== null && /^[0-9]+$/.test(answer.balance), key);
  const bad = await fetch(`${node.baseUrl}/v1/q/erc20/balances/${row.token}/nope`);
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { error: { code: string } }).error.code, 'invalid_request');
});
