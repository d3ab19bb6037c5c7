/**
 * Anchoring below the recorded chain: a node whose live source follows another node's JSON-RPC starts at that node's
 * head, so a materialization job over the blocks before it has no recorded block to link its chunks to. The history
 * lane walks headers down from the lowest recorded canonical block to the job's top first. Against a history source
 * serving another chain (a devnet with another seed: consistent in itself, never linked to the followed chain) the
 * job fails naming the first block that does not link and why; against the honest source it completes, and a job
 * re-created after DELETE keeps the proven anchor (no walk needed again), even across a restart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, runCli, startNodeProcess, waitUntil } from '../support/node-process.js';
import {
  admin, appliesPerBlock, assertOncePerBlock, blockNumber, coverage, rpcCall, createJob, followerToml, JOBS, missingIn, PRODUCER, waitForJob,
} from './history-support.js';

test('a job below the recorded chain is anchored by a header walk from the lowest recorded block: a forked source fails naming the block, the honest one completes; the anchor survives DELETE and restart', async (t) => {
  const forked = await startNodeProcess({ sets: [...PRODUCER, 'devnet.seed=another-chain'] });
  t.after(async () => { await forked.stop('SIGKILL'); removeDir(forked.dir); });
  const producer = await startNodeProcess({ sets: PRODUCER });
  t.after(async () => { await producer.stop('SIGKILL'); removeDir(producer.dir); });
  await waitUntil(producer, async () => (await blockNumber(producer)) >= 30 && (await blockNumber(forked)) >= 30, 120_000);

  let node = await startNodeProcess({ toml: followerToml(producer.rpcUrl, forked.rpcUrl), sets: ['runtime.shutdown_timeout_seconds=3', 'runtime.pool_threads=1'] });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  await waitUntil(node, async () => (await coverage(node, 'od')).finalizedThrough !== null, 60_000);
  const start = (await coverage(node, 'od')).available[0]!.fromBlock;
  assert.ok(start >= 30, `the follower starts at the producer's head (${start})`);
  const earliest = await rpcCall<{ number: string }>(node, 'eth_getBlockByNumber', ['earliest', false]);
  const lowest = Number(BigInt(earliest.number));
  assert.ok(lowest <= start && lowest >= 30, `the recorded chain starts at ${lowest}`);
  const to = lowest - 3;

  // The forked chain is consistent in itself: only the walk down from the recorded chain can tell it apart.
  const bad = await createJob(node, { processor: 'od', fromBlock: 5, toBlock: to, idempotencyKey: 'forked', source: 'forked' });
  const failed = await waitForJob(node, bad.id, ['completed', 'failed']);
  assert.equal(failed.state, 'failed');
  assert.equal(failed.lastError!.blockNumber, lowest - 1, 'the first header below the recorded chain does not link');
  assert.match(failed.lastError!.message, new RegExp(`block ${lowest - 1}: not the canonical chain: the source's block ${lowest - 1} has hash 0x[0-9a-f]{64}, but the proven canonical block ${lowest} names parent 0x[0-9a-f]{64}`));
  assert.deepEqual(missingIn(await coverage(node, 'od'), 5, to).length, to - 4, 'nothing of the forked chain is covered');

  const good = await createJob(node, { processor: 'od', fromBlock: 5, toBlock: to, idempotencyKey: 'honest', source: 'honest' });
  const done = await waitForJob(node, good.id, ['completed', 'failed']);
  assert.equal(done.state, 'completed', JSON.stringify(done.lastError));
  assert.deepEqual(missingIn(await coverage(node, 'od'), 5, to), []);
  assertOncePerBlock(await appliesPerBlock(node, 'od'), 5, to);
  // The history rows equal the producer's own processing of the same blocks.
  for (const n of [5, Math.floor((5 + to) / 2), to]) {
    const [mine, theirs] = await Promise.all([node, producer].map(async (x) => (await fetch(`${x.baseUrl}/v1/processors/${x === node ? 'od' : 'blobs'}/query/blobs/blocks/${n}`)).json() as Promise<Record<string, unknown>>));
    assert.deepEqual({ ...mine, network: null }, { ...theirs, network: null }, `block ${n}: the row equals the producer's (but for the network label)`);
  }

  // DELETE (the retry boundary) and a restart: a job below the first one links to the proven run; the forked source
  // now fails at the job's own top, against the anchor proven before (not at the recorded chain).
  assert.equal((await admin(node, 'DELETE', `${JOBS}/${done.id}`)).status, 204);
  assert.equal((await admin(node, 'DELETE', `${JOBS}/${failed.id}`)).status, 204);
  assert.equal(await node.stop('SIGTERM'), 0);
  node = await startNodeProcess({ dir: node.dir, toml: followerToml(producer.rpcUrl, forked.rpcUrl), sets: ['runtime.shutdown_timeout_seconds=3', 'runtime.pool_threads=1'] });
  const forkedBelow = await createJob(node, { processor: 'od', fromBlock: 0, toBlock: 4, idempotencyKey: 'forked', source: 'forked' });
  const failedBelow = await waitForJob(node, forkedBelow.id, ['completed', 'failed']);
  assert.equal(failedBelow.state, 'failed');
  assert.equal(failedBelow.lastError!.blockNumber, 4);
  assert.match(failedBelow.lastError!.message, /block 4: not the canonical chain: .* the proven canonical block 5 names parent/);
  const below = await createJob(node, { processor: 'od', fromBlock: 0, toBlock: 4, idempotencyKey: 'honest', source: 'honest' });
  assert.equal((await waitForJob(node, below.id, ['completed', 'failed'])).state, 'completed');
  assert.deepEqual(missingIn(await coverage(node, 'od'), 0, to), []);
  assertOncePerBlock(await appliesPerBlock(node, 'od'), 0, to);

  assert.equal(await node.stop('SIGTERM'), 0);
  const verify = await runCli(['db', 'verify', '--data-dir', node.dataDir]);
  assert.equal(verify.code, 0, `db verify:\n${verify.stdout}${verify.stderr}`);
});
