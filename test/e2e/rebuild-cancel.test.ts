/**
 * Cancelling and deleting a rebuild (spec §9.5) against the real node on the devnet: a rebuild of `blobs` cancelled
 * while its replacement backfills stops the replacement's lane at once (gone from /metrics, its coverage frozen while
 * the serving instance goes on), stays cancelled across kill -9 and a restart (its lane is not started again), and
 * its DELETE drops the replacement's tables (gone from the store's table list, `db inspect`), its job and record, and
 * says so. Refusals and bad input in the spec's error shape; the deleted instance name is never given again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, runCli, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { admin, coverage, FAST } from './history-support.js';

const TOML = ['[history]', 'chunk_blocks = 2', '[[sources.history]]', 'id = "devnet"', 'kind = "devnet"', '[[processors]]', 'id = "blobs"', 'kind = "blobs"', 'start_block = 0', ''].join('\n');
const REBUILDS = '/admin/v1/processors/blobs/rebuilds';

interface Rebuild { id: string; state: string; instance: string; cancelledAt: string | null; progress: { blocksDone: number; blocksTotal: number; job: string | null } }

async function rebuild(node: NodeProcess, id: string): Promise<Rebuild> {
  const answer = await admin(node, 'GET', `${REBUILDS}/${id}`);
  assert.equal(answer.status, 200, JSON.stringify(answer.json));
  return answer.json as Rebuild;
}

async function metrics(node: NodeProcess): Promise<string> {
  return (await fetch(`${node.baseUrl}/metrics`)).text();
}

function head(cov: { available: Array<{ toBlock: number }> }): number {
  return Math.max(-1, ...cov.available.map((a) => a.toBlock));
}

function assertError(answer: { status: number; json: any }, status: number, code: string): void {
  assert.equal(answer.status, status, JSON.stringify(answer.json));
  assert.equal(answer.json.error.code, code);
  assert.equal(typeof answer.json.error.message, 'string');
  assert.equal(typeof answer.json.error.retryable, 'boolean');
  assert.equal(typeof answer.json.error.requestId, 'string');
}

test('rebuild cancel and delete: the lane stops mid-backfill, stays stopped after kill -9, and delete drops its tables and records', async (t) => {
  let node = await startNodeProcess({ toml: TOML, sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  await waitUntil(node, async () => ((await coverage(node, 'blobs')).finalizedThrough ?? 0) >= 60, 120_000);

  const created = await admin(node, 'POST', '/admin/v1/processors/blobs/rebuild', { idempotencyKey: 'c1' });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const id = (created.json as Rebuild).id;
  const lane = 'lane="processor.blobs~r1"';
  await waitUntil(node, async () => (await rebuild(node, id)).progress.blocksDone > 0, 60_000);
  assert.ok((await metrics(node)).includes(lane), 'the replacement lane runs before the cancel');

  // Bad input and refusals in the error shape.
  assertError(await admin(node, 'POST', `${REBUILDS}/rb-blobs-9/cancel`), 404, 'not_found');
  assertError(await admin(node, 'POST', `${REBUILDS}/..%2f/cancel`), 404, 'not_found');
  assertError(await admin(node, 'POST', '/admin/v1/processors/nope/rebuilds/rb-nope-1/cancel'), 404, 'not_found');
  assertError(await admin(node, 'DELETE', `${REBUILDS}/rb-blobs-9`), 404, 'not_found');
  const early = await admin(node, 'DELETE', `${REBUILDS}/${id}`);
  assertError(early, 409, 'conflict');
  assert.equal(early.json.error.details.rebuild, id);

  // Cancel mid-backfill: terminal at once, its lane stopped and removed.
  const before = await rebuild(node, id);
  const cancelled = await admin(node, 'POST', `${REBUILDS}/${id}/cancel`);
  assert.equal(cancelled.status, 200, JSON.stringify(cancelled.json));
  assert.equal(cancelled.json.state, 'cancelled');
  assert.equal(typeof cancelled.json.cancelledAt, 'string');
  t.diagnostic(`cancelled in state ${before.state} with ${before.progress.blocksDone}/${before.progress.blocksTotal} blocks backfilled`);
  assert.equal(before.state, 'backfilling', 'the rebuild was cancelled while its replacement backfilled');
  assert.equal((await admin(node, 'POST', `${REBUILDS}/${id}/cancel`)).json.state, 'cancelled', 'cancel again: the same answer');
  assertError(await admin(node, 'POST', `${REBUILDS}/${id}/promote`), 409, 'conflict');
  assert.equal((await metrics(node)).includes(lane), false, 'the replacement lane is gone from /metrics');
  const job = (await admin(node, 'GET', `/admin/v1/materialization-jobs/cb-blobs~r1`)).json as { state: string };
  await waitUntil(node, async () => (await admin(node, 'GET', '/admin/v1/materialization-jobs/cb-blobs~r1')).json.state === 'cancelled', 30_000);
  t.diagnostic(`its cold-backfill job was ${job.state} right after the cancel`);
  const processors = (await (await fetch(`${node.baseUrl}/v1/processors`)).json()) as { data: Array<{ rebuilds?: Array<{ id: string; state: string }> }> };
  assert.equal(processors.data[0]?.rebuilds?.find((r) => r.id === id)?.state, 'cancelled');
  // Its coverage no longer moves while the serving instance follows the chain.
  const frozen = head(await coverage(node, 'blobs~r1'));
  const serving = head(await coverage(node, 'blobs'));
  await waitUntil(node, async () => head(await coverage(node, 'blobs')) >= serving + 10, 60_000);
  assert.equal(head(await coverage(node, 'blobs~r1')), frozen, 'the cancelled replacement applies nothing more');

  // kill -9 and restart: still cancelled, its lane not started again.
  await node.stop('SIGKILL');
  node = await startNodeProcess({ dir: node.dir, toml: TOML, sets: FAST });
  assert.equal((await rebuild(node, id)).state, 'cancelled');
  await waitUntil(node, async () => head(await coverage(node, 'blobs')) >= serving + 15, 60_000);
  assert.equal((await metrics(node)).includes(lane), false, 'no lane for the cancelled replacement after the restart');
  assert.equal(head(await coverage(node, 'blobs~r1')), frozen);
  assert.equal(node.output.some((line) => line.includes('rebuild replacement lane started')), false);

  // Delete: the tables dropped and the records removed, in one answer.
  const deleted = await admin(node, 'DELETE', `${REBUILDS}/${id}`);
  assert.equal(deleted.status, 200, JSON.stringify(deleted.json));
  assert.equal(deleted.json.deleted, id);
  assert.equal(deleted.json.instance, 'blobs~r1');
  assert.deepEqual([...deleted.json.tables].sort(), ['artifacts', 'changes', 'checkpoints', 'coverage', 'entities', 'savepoints', 'state', 'undo'].map((k) => `p.blobs~r1.${k}`));
  assert.ok(deleted.json.entries > 0, 'the dropped tables held the backfilled blocks');
  assert.deepEqual(deleted.json.jobs, ['cb-blobs~r1']);
  assertError(await admin(node, 'DELETE', `${REBUILDS}/${id}`), 404, 'not_found');
  assertError(await admin(node, 'GET', `${REBUILDS}/${id}`), 404, 'not_found');
  assert.equal((await admin(node, 'GET', '/admin/v1/materialization-jobs/cb-blobs~r1')).status, 404);
  assert.equal((await fetch(`${node.baseUrl}/v1/processors/blobs~r1/status`)).status, 404);

  // A new rebuild never takes the deleted instance's name (cursors name their instance).
  const next = await admin(node, 'POST', '/admin/v1/processors/blobs/rebuild', { idempotencyKey: 'c1' });
  assert.equal(next.status, 201, 'the idempotency key was freed by the delete');
  assert.notEqual(next.json.instance, 'blobs~r1');
  assert.equal((await admin(node, 'POST', `${REBUILDS}/${next.json.id}/cancel`)).json.state, 'cancelled');

  assert.equal(await node.stop(), 0);
  const inspect = await runCli(['db', 'inspect', '--data-dir', node.dataDir]);
  assert.equal(inspect.code, 0, inspect.stderr);
  const names = (JSON.parse(inspect.stdout) as { tables: Array<{ name: string }> }).tables.map((table) => table.name);
  assert.equal(names.some((name) => name.startsWith('p.blobs~r1.')), false, names.join(' '));
  assert.ok(names.includes('p.blobs.coverage'), 'the serving instance keeps its tables');
});
