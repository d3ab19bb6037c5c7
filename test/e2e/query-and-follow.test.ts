import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createNodeClient, runFollow, type ChangeEnvelope } from '../../api/client/index.js';
import { openStore } from '../../store/store.js';
import { listSnapshots } from '../../store/snapshots.js';
import { removeDir, runCli, startNodeProcess, waitUntil, type NodeProcess, type StartNodeOptions } from '../support/node-process.js';

/** Starts the node and waits for readiness with room for a loaded machine (the helper's default is 20 s). */
async function startReady(options: StartNodeOptions): Promise<NodeProcess> {
  const node = await startNodeProcess({ ...options, waitReady: false });
  await waitUntil(node, async () => (await fetch(`${node.baseUrl}/health/ready`)).status === 200, 120_000).catch(async (error: unknown) => {
    await node.stop();
    throw error;
  });
  return node;
}

const FAST = ['devnet.block_time_ms=150', 'devnet.reorg_every=8', 'devnet.reorg_depth=2', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'sse.heartbeat_seconds=1'];
const QF = '/v1/processors/blobs/collections/blocks/query-and-follow';

interface Entity { key: string; block: { number: number } | null; finality: string | null; data: { blockNumber: number; finality: string } }
interface SnapshotPage {
  data: Entity[];
  nextCursor: string | null;
  snapshotId: string;
  changeBoundary: { sequence: string };
  boundaryCursor: string | null;
  recovery: { action: string; follow: { changes: string; stream: string } | null };
  rowCount: number;
  valueBytes: number;
  retainedBounds: { fromBlock: number; toBlock: number } | null;
  coverage: { available: unknown[] };
  expiresAt: string;
}
interface ErrorBody { error: { code: string; message: string; retryable: boolean; details?: Record<string, unknown> } }

async function post<T>(node: NodeProcess, body: unknown): Promise<{ status: number; body: T; text: string }> {
  const response = await fetch(`${node.baseUrl}${QF}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as T, text };
}

async function get(node: NodeProcess, path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${node.baseUrl}${path}`);
  return { status: response.status, text: await response.text() };
}

async function headBlock(node: NodeProcess): Promise<number> {
  const { text } = await get(node, '/v1/processors/blobs/collections');
  return (JSON.parse(text) as { data: Array<{ retainedBounds: { toBlock: number } | null }> }).data[0]!.retainedBounds?.toBlock ?? -1;
}

/** Every page of a snapshot by its nextCursor (alternating the entities route and the query-and-follow body), as raw texts. */
async function allPages(node: NodeProcess, first: SnapshotPage, limit: number): Promise<string[]> {
  const texts: string[] = [];
  let cursor = first.nextCursor;
  while (cursor !== null) {
    const page = texts.length % 2 === 0
      ? await get(node, `/v1/processors/blobs/collections/blocks/entities?cursor=${cursor}&limit=${limit}`)
      : await post<SnapshotPage>(node, { cursor, limit });
    assert.equal(page.status, 200, page.text);
    texts.push(page.text);
    cursor = (JSON.parse(page.text) as SnapshotPage).nextCursor;
  }
  return texts;
}

/** A materialized view of the `blocks` collection, keyed by entity key. */
class BlocksView {
  readonly rows = new Map<string, { blockNumber: number; finality: string } & Record<string, unknown>>();
  importPage(page: SnapshotPage): void {
    for (const entity of page.data) this.rows.set(entity.key, entity.data);
  }
  apply(change: ChangeEnvelope): void {
    const data = change.data as { block?: { blockNumber: number; finality: string } & Record<string, unknown> } | null;
    if (change.kind === 'blobs.block.put' && change.operation === 'apply') this.rows.set(change.key!, data!.block!);
    else if (change.kind === 'blobs.block.delete') this.rows.delete(change.key!);
    else if (change.operation === 'finalized') {
      for (const [key, row] of this.rows) if (row.blockNumber <= change.block!.number) this.rows.set(key, { ...row, finality: 'finalized' });
    }
  }
}

test('bootstrap: query-and-follow, import every page, follow from boundaryCursor across a reorg; the view equals the node', async (t) => {
  const node = await startReady({ sets: FAST });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  await waitUntil(node, async () => (await headBlock(node)) >= 10, 60_000);

  const first = await post<SnapshotPage>(node, { limit: 4 });
  assert.equal(first.status, 200, first.text);
  const snapshot = first.body;
  assert.match(snapshot.snapshotId, /^[A-Za-z0-9_-]{16}$/);
  assert.ok(snapshot.rowCount >= 11 && snapshot.data.length === 4);
  assert.ok(snapshot.valueBytes > 0 && snapshot.boundaryCursor && snapshot.recovery.follow && snapshot.retainedBounds && snapshot.coverage);
  const pages = await allPages(node, snapshot, 4);
  const imported = [snapshot, ...pages.map((text) => JSON.parse(text) as SnapshotPage)];
  const rows = imported.flatMap((p) => p.data);
  assert.equal(rows.length, snapshot.rowCount, 'rowCount is the actual number of rows');
  assert.equal(rows.reduce((sum, r) => sum + Buffer.byteLength(JSON.stringify(r)), 0), snapshot.valueBytes, 'valueBytes is the actual size of the rows');
  assert.deepEqual(rows.map((r) => r.block!.number), rows.map((_, i) => i), 'every block from genesis once, in order');
  for (const page of imported) assert.equal(page.changeBoundary.sequence, snapshot.changeBoundary.sequence, 'every page names the same boundary');

  // Blocks keep committing: the same page is the same bytes.
  const head = await headBlock(node);
  await waitUntil(node, async () => (await headBlock(node)) >= head + 3, 60_000);
  assert.deepEqual(await allPages(node, snapshot, 4), pages, 'later pages are identical while new blocks commit');

  // The first change after the boundary has the next sequence: nothing committed later is inside the snapshot.
  const after = JSON.parse((await get(node, snapshot.recovery.follow!.changes + '&limit=1')).text) as { data: ChangeEnvelope[] };
  assert.equal(after.data[0]!.sequence, String(BigInt(snapshot.changeBoundary.sequence) + 1n));

  const view = new BlocksView();
  for (const page of imported) view.importPage(page);
  const client = createNodeClient({ baseUrl: node.baseUrl });
  const controller = new AbortController();
  let sawUndo = false;
  let target: SnapshotPage | null = null;
  let last = '';
  const outcome = await runFollow({ client, processor: 'blobs', after: snapshot.boundaryCursor, signal: controller.signal }, async (change) => {
    assert.equal(BigInt(change.sequence), last === '' ? BigInt(snapshot.changeBoundary.sequence) + 1n : BigInt(last) + 1n, 'no gap, no repeat');
    last = change.sequence;
    view.apply(change);
    if (change.operation === 'undo') sawUndo = true;
    if (sawUndo && target === null) {
      const second = await post<SnapshotPage>(node, { limit: 1000 });
      assert.equal(second.status, 200, second.text);
      target = second.body;
    }
    if (target !== null && change.sequence === target.changeBoundary.sequence) controller.abort();
  });
  assert.equal(outcome.kind, 'aborted');
  assert.ok(sawUndo, 'the follow crossed a reorg');
  const final = target as SnapshotPage | null;
  assert.ok(final && final.nextCursor === null);
  const expected = new Map(final.data.map((e) => [e.key, e.data]));
  assert.equal(view.rows.size, expected.size);
  assert.deepEqual(new Map([...view.rows].sort()), new Map([...expected].sort()), 'the materialized view equals the node\'s state at the boundary');
});

test('snapshot pages survive a restart; DELETE releases; an expired snapshot and an oversized one answer clear errors', async (t) => {
  const sets = [...FAST, 'snapshots.max_rows=6', 'snapshots.sweep_interval_seconds=1'];
  const node = await startReady({ sets });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  await waitUntil(node, async () => (await headBlock(node)) >= 8, 60_000);

  const tooBig = await post<ErrorBody>(node, { limit: 2 });
  assert.equal(tooBig.status, 413);
  assert.equal(tooBig.body.error.code, 'query_too_expensive');
  const created = await post<SnapshotPage>(node, { fromBlock: 2, toBlock: 6, limit: 2 });
  assert.equal(created.status, 200, created.text);
  assert.equal(created.body.rowCount, 5);
  const pages = await allPages(node, created.body, 2);
  assert.equal(pages.length, 2);

  await node.stop();
  const restarted = await startReady({ dir: node.dir, sets: [...sets, 'snapshots.ttl_seconds=2'] });
  t.after(() => restarted.stop());
  assert.deepEqual(await allPages(restarted, created.body, 2), pages, 'the same pages after a restart');
  const typed = await get(restarted, '/v1/q/blobs/snapshot?fromBlock=1&toBlock=3&limit=2');
  assert.equal(typed.status, 200, typed.text);
  const short = JSON.parse(typed.text) as SnapshotPage;
  assert.deepEqual(short.data.map((e) => e.block!.number), [1, 2]);

  const release = await fetch(`${restarted.baseUrl}/v1/processors/blobs/query-snapshots/${created.body.snapshotId}`, { method: 'DELETE' });
  assert.equal(release.status, 204);
  const released = await get(restarted, `/v1/processors/blobs/collections/blocks/entities?cursor=${created.body.nextCursor}`);
  assert.equal(released.status, 410);
  assert.equal((JSON.parse(released.text) as ErrorBody).error.code, 'cursor_expired');
  assert.match((JSON.parse(released.text) as ErrorBody).error.message, /released/);
  assert.equal((await fetch(`${restarted.baseUrl}/v1/processors/blobs/query-snapshots/AAAAAAAAAAAAAAAA`, { method: 'DELETE' })).status, 404);
  assert.equal((await fetch(`${restarted.baseUrl}/v1/processors/blobs/query-snapshots/not-an-id`, { method: 'DELETE' })).status, 400);

  // ttl_seconds = 2: the page answers until the snapshot's expiry time passes, then 410 (reading it never extends it).
  let expired = await get(restarted, `/v1/q/blobs/snapshot?cursor=${short.nextCursor}`);
  const expiresBy = Date.now() + 60_000;
  while (expired.status === 200 && Date.now() < expiresBy) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    expired = await get(restarted, `/v1/q/blobs/snapshot?cursor=${short.nextCursor}`);
  }
  assert.equal(expired.status, 410, expired.text);
  const body = JSON.parse(expired.text) as ErrorBody;
  assert.equal(body.error.code, 'cursor_expired');
  assert.match(body.error.message, /expired/);
  assert.equal(body.error.details!.action, 'query-and-follow again');

  // The sweep (every second here) removes the expired rows; released rows went at once. Wait for the
  // sweep itself, read through a read-only view of the running node's store, not for a guessed delay.
  const view = openStore({ dataDir: restarted.dataDir, readOnly: true });
  try {
    const sweptBy = Date.now() + 60_000;
    for (;;) {
      const records = listSnapshots(view.snapshots);
      if (view.snapshotRows.getKeysCount() === 0 && records.length === 2 && records.every((r) => r.state !== 'active')) break;
      if (Date.now() > sweptBy) assert.fail(`the sweep did not retire the expired snapshot: ${view.snapshotRows.getKeysCount()} rows, ${JSON.stringify(records.map((r) => r.state))}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await view.close();
  }
  await restarted.stop();
  const inspect = await runCli(['db', 'inspect', '--data-dir', restarted.dataDir]);
  assert.equal(inspect.code, 0, inspect.stderr);
  const tables = (JSON.parse(inspect.stdout) as { tables: Array<{ name: string; entries: number }> }).tables;
  assert.equal(tables.find((table) => table.name === 'snapshot.rows')!.entries, 0, 'no snapshot rows remain after release and expiry');
  assert.equal(tables.find((table) => table.name === 'snapshots')!.entries, 2, 'both are remembered as tombstones');
});
