/**
 * The `processor_job` artifact owner (spec §2.9, §4.5) through the real node: a materialization job over old history
 * of an on_demand instance that retains a window of 2 blocks keeps each block's artifact for the job, below the
 * window where the instance's own claim lapses; releasing the job's claim deletes exactly those records, and the
 * instance's window is untouched.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, waitUntil } from '../support/node-process.js';
import { coverage, createJob, historyToml, nodeWithHistory, waitForJob } from './history-support.js';

const TOML = `${historyToml('[[sources.history]]\nid = "devnet"\nkind = "devnet"\n', 8)}[processors.artifacts]\nretention = "window"\nwindow_blocks = 2\n`;

interface Owner { ownerKind: string; ownerId: string }

test('a materialization job keeps its blocks\' artifacts below the instance\'s window; releasing the job\'s claim deletes them', async (t) => {
  const node = await nodeWithHistory(30, TOML);
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  await waitUntil(node, async () => (await coverage(node, 'od')).finalizedThrough !== null, 60_000);
  const start = (await coverage(node, 'od')).available[0]!.fromBlock;
  assert.ok(start > 20, `od starts at the journal head (${start}); blocks 0-9 are history`);

  const job = await createJob(node, { processor: 'od', fromBlock: 0, toBlock: 9, idempotencyKey: 'artifact-owner' });
  const done = await waitForJob(node, job.id, ['completed', 'failed']);
  assert.equal(done.state, 'completed', JSON.stringify(done.lastError));

  for (const n of [0, 5, 9]) {
    const answer = await fetch(`${node.baseUrl}/v1/processors/od/artifacts/${n}`);
    const body = await answer.json() as { owners: Owner[] };
    assert.equal(answer.status, 200, JSON.stringify(body));
    assert.deepEqual(body.owners, [{ ownerKind: 'processor_job', ownerId: job.id }], `block ${n}: only the job claims it (below the window)`);
  }
  const page = await fetch(`${node.baseUrl}/v1/processors/od/artifacts/export?fromBlock=0&toBlock=9`);
  assert.equal(page.status, 200);
  assert.equal(page.headers.get('x-node-artifact-complete'), 'true', 'the job kept every block of its range');
  await page.body?.cancel();

  const release = await fetch(`${node.baseUrl}/admin/v1/processors/od/artifacts?ownerKind=processor_job&ownerId=${job.id}&fromBlock=0&toBlock=9`, { method: 'DELETE' });
  const released = await release.json() as { released: number; deleted: number };
  assert.equal(release.status, 200, JSON.stringify(released));
  assert.deepEqual([released.released, released.deleted], [10, 10]);
  const gone = await fetch(`${node.baseUrl}/v1/processors/od/artifacts/5`);
  assert.equal(gone.status, 409, 'released and unclaimed: not retained');
  await gone.body?.cancel();
  const status = await (await fetch(`${node.baseUrl}/v1/processors/od/artifacts/status`)).json() as { retained: { fromBlock: number; toBlock: number } | null };
  assert.ok(status.retained !== null && status.retained.fromBlock > 9, `only the instance's window is left: ${JSON.stringify(status)}`);
});
