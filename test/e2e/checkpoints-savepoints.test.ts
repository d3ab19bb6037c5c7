/**
 * Checkpoints and savepoints through the real node on a live devnet (spec §2.9, §3.5, §4.3):
 * restoring the current checkpoint succeeds while the chain runs past it and leaves the state equal
 * to an instance that processed every block from scratch; a savepoint exported from one node seeds a
 * new instance on another node of the same chain (`seededFromCheckpoint`, exact balances) whose state
 * then equals processing from scratch; savepoints of another chain, kind or version, or damaged, are
 * refused at start-up with the reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeSavepoint, encodeSavepoint } from '../../store/savepoints.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const FAST = ['devnet.block_time_ms=150', 'devnet.reorg_every=6', 'devnet.reorg_depth=2', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100'];
const erc20 = (id: string, extra: string[] = []) => ['[[processors]]', `id = "${id}"`, 'kind = "erc20"', 'tokens = "*"', ...extra];

interface Snapshot { rows: Map<string, unknown>; cursor: { number: number; hash: string } | null; coverage: Record<string, unknown> }

/** A query-and-follow snapshot of an instance's balances: every page from one read, with its coverage. */
async function snapshot(node: NodeProcess, processor: string): Promise<Snapshot> {
  const rows = new Map<string, unknown>();
  const url = `${node.baseUrl}/v1/processors/${processor}/collections/balances/query-and-follow`;
  let body: Record<string, unknown> = { limit: 1000 };
  let coverage: Record<string, unknown> | null = null;
  let snapshotId = '';
  for (;;) {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const page = await response.json() as { data: Array<{ key: string; data: unknown }>; nextCursor: string | null; coverage: Record<string, unknown>; snapshotId: string };
    assert.equal(response.status, 200, JSON.stringify(page));
    coverage ??= page.coverage;
    snapshotId ||= page.snapshotId;
    for (const entity of page.data) rows.set(entity.key, entity.data);
    if (page.nextCursor === null) break;
    body = { cursor: page.nextCursor, limit: 1000 };
  }
  // Released at once: the node keeps only so many open snapshots.
  assert.equal((await fetch(`${node.baseUrl}/v1/processors/${processor}/query-snapshots/${snapshotId}`, { method: 'DELETE' })).status, 204);
  return { rows, cursor: coverage.reduceCursor as Snapshot['cursor'], coverage };
}

/**
 * Waits until both instances' snapshots are at the same reduce cursor (at or past `atLeast`) and at the same finalized
 * block, and returns them: each instance applies finality moves on its own, and a row's `finality` is derived from
 * its instance's finalized block where it is served, so two instances at one cursor may still differ in it.
 */
async function alike(node: NodeProcess, a: string, b: string, atLeast: number): Promise<[Snapshot, Snapshot]> {
  let pair: [Snapshot, Snapshot] | null = null;
  await waitUntil(node, async () => {
    // Taken together, so both usually fall between the same two blocks.
    const [x, y] = await Promise.all([snapshot(node, a), snapshot(node, b)]);
    if (x.cursor === null || x.cursor.number < atLeast || JSON.stringify(x.cursor) !== JSON.stringify(y.cursor)) return false;
    if (x.coverage.finalizedThrough !== y.coverage.finalizedThrough) return false;
    pair = [x, y];
    return true;
  }, 120_000);
  return pair!;
}

const sorted = (rows: Map<string, unknown>) => [...rows].sort(([a], [b]) => (a < b ? -1 : 1));

async function json<T>(response: Promise<Response>, status: number): Promise<T> {
  const answer = await response;
  const body = await answer.text();
  assert.equal(answer.status, status, body);
  return JSON.parse(body) as T;
}

test('on a live devnet the current checkpoint restores (its rows plus the retained blocks re-reduced to the cursor) and the state equals an instance that processed every block; a savepoint seeds a new instance on another node, which then equals processing from scratch', async (t) => {
  const a = await startNodeProcess({ toml: [...erc20('erc20', ['checkpoint_every_blocks = 4', 'checkpoints_retained = 2']), ...erc20('reference', ['checkpoint_every_blocks = 0']), ''].join('\n'), sets: FAST, readyTimeoutMs: 120_000 });
  t.after(async () => { await a.stop(); removeDir(a.dir); });
  type Checkpoint = { checkpoint: string; blockNumber: number };
  let checkpoints: Checkpoint[] = [];
  await waitUntil(a, async () => {
    checkpoints = (await json<{ data: Checkpoint[] }>(fetch(`${a.baseUrl}/v1/processors/erc20/checkpoints`), 200)).data;
    return checkpoints.length === 2;
  }, 120_000);
  // A new checkpoint is due every 600 ms: one listed can be superseded before the restore arrives
  // (409, older than the current one) on a loaded machine; list again and retry.
  let answer = await fetch(`${a.baseUrl}/v1/processors/erc20/checkpoints/${checkpoints[0]!.checkpoint}/restore`, { method: 'POST' });
  for (let attempt = 1; answer.status === 409 && attempt < 50; attempt += 1) {
    await answer.body?.cancel();
    checkpoints = (await json<{ data: Checkpoint[] }>(fetch(`${a.baseUrl}/v1/processors/erc20/checkpoints`), 200)).data;
    answer = await fetch(`${a.baseUrl}/v1/processors/erc20/checkpoints/${checkpoints[0]!.checkpoint}/restore`, { method: 'POST' });
  }
  const restored = await json<{ restored: { blockNumber: number; replayed: { fromBlock: number; toBlock: number; blocks: number } | null; reduceCursor: { number: number } } }>(Promise.resolve(answer), 200);
  assert.ok(restored.restored.reduceCursor.number > restored.restored.blockNumber, 'the chain ran past the checkpoint, as a live chain does');
  assert.deepEqual(restored.restored.replayed, { fromBlock: restored.restored.blockNumber + 1, toBlock: restored.restored.reduceCursor.number, blocks: restored.restored.reduceCursor.number - restored.restored.blockNumber });
  // Past the restore by more than a reorg's period: the blocks after it, undone ones included, were reduced onto the repaired state.
  const [repaired, reference] = await alike(a, 'erc20', 'reference', restored.restored.reduceCursor.number + 8);
  assert.ok(repaired.rows.size > 10);
  assert.deepEqual(sorted(repaired.rows), sorted(reference.rows), 'the repaired instance equals the one that processed every block');

  // A savepoint: the state as of the finalized block, exported as an archive.
  const created = await json<{ savepoint: { id: string; blockNumber: number; digest: string; rowCount: number } }>(
    fetch(`${a.baseUrl}/v1/processors/erc20/savepoints`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'sp-1' }) }), 201);
  const listed = await json<{ data: Array<{ id: string }> }>(fetch(`${a.baseUrl}/v1/processors/erc20/savepoints`), 200);
  assert.deepEqual(listed.data.map((s) => s.id), ['sp-1']);
  const download = await fetch(`${a.baseUrl}/v1/processors/erc20/savepoints/sp-1`);
  assert.equal(download.status, 200);
  assert.equal(download.headers.get('content-type'), 'application/vnd.node.savepoint');
  assert.equal(download.headers.get('x-node-savepoint-digest'), created.savepoint.digest);
  const archive = Buffer.from(await download.arrayBuffer());
  const { header, rows } = decodeSavepoint(archive);
  assert.deepEqual([header.processor.kind, header.processor.version, header.block.number, rows.length, header.stateFrom !== null], ['erc20', '1.0.0', created.savepoint.blockNumber, created.savepoint.rowCount, true]);
  const file = join(a.dir, 'sp-1.savepoint');
  writeFileSync(file, archive);
  assert.equal((await fetch(`${a.baseUrl}/v1/processors/erc20/savepoints/sp-1`, { method: 'DELETE' })).status, 204);
  assert.equal((await fetch(`${a.baseUrl}/v1/processors/erc20/savepoints/sp-1`)).status, 404);

  // Another node of the same chain: a new instance seeded from it, beside one processing from genesis.
  const b = await startNodeProcess({ toml: [...erc20('seeded', [`seed_savepoint = ${JSON.stringify(file)}`]), ...erc20('scratch'), ''].join('\n'), sets: FAST, readyTimeoutMs: 120_000 });
  t.after(async () => { await b.stop(); removeDir(b.dir); });
  const [seeded, scratch] = await alike(b, 'seeded', 'scratch', header.block.number + 8);
  assert.equal(seeded.coverage.seededFromCheckpoint, true);
  assert.equal(scratch.coverage.seededFromCheckpoint, false);
  assert.deepEqual((seeded.coverage.available as Array<{ fromBlock: number }>)[0]!.fromBlock, header.block.number + 1, 'the seeded instance processed from the block after its savepoint');
  assert.deepEqual(sorted(seeded.rows), sorted(scratch.rows), 'seeded state plus the blocks after it equals processing from scratch');
  // Its balances are exact: the savepoint's state reflected every block from genesis.
  const [row] = [...seeded.rows.values()] as Array<{ token: string; address: string; balance: string }>;
  const balance = await json<{ exact: boolean; balance: string | null; coverage: { seededFromCheckpoint: boolean } }>(fetch(`${b.baseUrl}/v1/processors/seeded/query/erc20/balances/${row!.token}/${row!.address}`), 200);
  assert.equal(balance.exact, true);
  assert.equal(balance.coverage.seededFromCheckpoint, true);
  assert.match(balance.balance ?? '', /^[0-9]+$/);
});

test('a savepoint of another chain, kind or version, or a damaged one, is refused at start-up with the reason; a block-local processor keeps no savepoints', async (t) => {
  const a = await startNodeProcess({ toml: [...erc20('erc20'), '[[processors]]', 'id = "blobs"', 'kind = "blobs"', ''].join('\n'), sets: FAST, readyTimeoutMs: 120_000 });
  t.after(async () => { await a.stop(); removeDir(a.dir); });
  await waitUntil(a, async () => (await fetch(`${a.baseUrl}/v1/processors/erc20/savepoints`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'sp' }) })).status === 201, 120_000);
  assert.equal((await fetch(`${a.baseUrl}/v1/processors/blobs/savepoints`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'sp' }) })).status, 404);
  const archive = Buffer.from(await (await fetch(`${a.baseUrl}/v1/processors/erc20/savepoints/sp`)).arrayBuffer());
  const { header, rows } = decodeSavepoint(archive);
  const files = {
    good: archive,
    otherVersion: encodeSavepoint({ ...header, processor: { ...header.processor, version: '2.0.0' } }, rows),
    damaged: Buffer.concat([archive.subarray(0, 40), Buffer.from([archive[40]! ^ 1]), archive.subarray(41)]),
  };
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(a.dir, `${name}.savepoint`), bytes);
  const refusals: Array<{ toml: string[]; sets?: string[]; reason: RegExp }> = [
    { toml: erc20('x', [`seed_savepoint = "${join(a.dir, 'good.savepoint')}"`]), sets: ['devnet.seed=another-chain'], reason: /another chain: its genesis is 0x[0-9a-f]{64}/ },
    { toml: ['[[processors]]', 'id = "x"', 'kind = "amm"', 'pools = "*"', `seed_savepoint = "${join(a.dir, 'good.savepoint')}"`], reason: /is of kind 'erc20'; this processor is kind 'amm'/ },
    { toml: erc20('x', [`seed_savepoint = "${join(a.dir, 'otherVersion.savepoint')}"`]), reason: /erc20 version 2\.0\.0; this processor runs version 1\.0\.0/ },
    { toml: erc20('x', [`seed_savepoint = "${join(a.dir, 'damaged.savepoint')}"`]), reason: /checksum mismatch/ },
    { toml: ['[[processors]]', 'id = "x"', 'kind = "erc20"', 'tokens = ["0x00000000000000000000000000000000000000aa"]', `seed_savepoint = "${join(a.dir, 'good.savepoint')}"`], reason: /other options/ },
  ];
  for (const refusal of refusals) {
    const node = await startNodeProcess({ toml: [...refusal.toml, ''].join('\n'), sets: [...FAST, ...(refusal.sets ?? [])], waitReady: false });
    const code = await node.exited;
    removeDir(node.dir);
    const output = node.output.join('\n');
    assert.equal(code, 1, output);
    assert.match(output, /config key 'processors\[0\]\.seed_savepoint'/, output);
    assert.match(output, refusal.reason, output);
  }
  assert.ok(readFileSync(join(a.dir, 'good.savepoint')).equals(archive));
});
