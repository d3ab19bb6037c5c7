/**
 * Materialization jobs over the devnet history source, against the real node: a job over a range with gaps
 * processes exactly the gaps (each block once, rows equal to the live instance's), idempotency, the rules and bad
 * input in the spec's error shape, DELETE as the retry boundary, the source probe, and kill -9 during jobs (several
 * trials): after each restart the job resumes and the coverage has no gap and no block processed twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, runCli, startNodeProcess, waitUntil } from '../support/node-process.js';
import {
  admin, appliesPerBlock, assertOncePerBlock, assertSameRows, coverage, createJob, FAST, historyToml, job, JOBS, missingIn, nodeWithHistory, waitForJob,
} from './history-support.js';

const DEVNET_SOURCE = '[[sources.history]]\nid = "devnet"\nkind = "devnet"\n';

test('a materialization job fills exactly the gaps of its range, once each, with the rows live processing gives; idempotent; rules and bad input answered in the error shape', async (t) => {
  const node = await nodeWithHistory(60, historyToml(DEVNET_SOURCE, 8));
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  await waitUntil(node, async () => (await coverage(node, 'od')).finalizedThrough !== null, 60_000);
  const start = (await coverage(node, 'od')).available[0]!.fromBlock;
  assert.ok(start > 50, `od starts at the journal head of its first run (${start}), its history waits for jobs`);

  // A first job covers the middle: the later job's range then has two gaps.
  const middle = await createJob(node, { processor: 'od', fromBlock: 10, toBlock: 20, idempotencyKey: 'middle' });
  assert.equal(middle.state, 'queued');
  assert.equal(middle.progress.blocksTotal, 11);
  const middleDone = await waitForJob(node, middle.id, ['completed', 'failed']);
  assert.equal(middleDone.state, 'completed', JSON.stringify(middleDone.lastError));

  const to = start + 3;
  await waitUntil(node, async () => ((await coverage(node, 'od')).finalizedThrough ?? 0) >= to, 60_000);
  const before = await coverage(node, 'od');
  const gaps = missingIn(before, 0, to);
  assert.deepEqual(gaps, [...Array.from({ length: 10 }, (_, i) => i), ...Array.from({ length: start - 21 }, (_, i) => 21 + i)]);
  const body = { processor: 'od', fromBlock: 0, toBlock: to, idempotencyKey: 'whole' };
  const whole = await createJob(node, body);
  assert.equal(whole.progress.blocksTotal, gaps.length, 'the job\'s work is exactly the missing blocks');
  // Same key and body: the same job (200); same key, another body: 409.
  const again = await createJob(node, body, 200);
  assert.equal(again.id, whole.id);
  const conflict = await admin(node, 'POST', JOBS, { ...body, mode: 'fill_missing', toBlock: to - 1 });
  assert.equal(conflict.status, 409);
  assert.equal(conflict.json.error.code, 'conflict');
  const done = await waitForJob(node, whole.id, ['completed', 'failed']);
  assert.equal(done.state, 'completed', JSON.stringify(done.lastError));
  assert.equal(done.progress.blocksDone, gaps.length);
  assert.equal(done.progress.currentChunk, null, 'a completed job works on no chunk');
  assert.deepEqual(missingIn(await coverage(node, 'od'), 0, to), [], 'no gap left in the range');
  assertOncePerBlock(await appliesPerBlock(node, 'od'), 0, start - 1);
  await assertSameRows(node, 0, start - 1);

  // The job list; a terminal job is the retry boundary: DELETE, then the key can be used again.
  const list = await admin(node, 'GET', JOBS);
  assert.deepEqual(list.json.data.map((j: { id: string }) => j.id), [middle.id, whole.id]);
  assert.equal((await admin(node, 'DELETE', `${JOBS}/${whole.id}`)).status, 204);
  assert.equal((await admin(node, 'GET', `${JOBS}/${whole.id}`)).status, 404);
  const retried = await createJob(node, body);
  assert.notEqual(retried.id, whole.id);
  assert.equal(retried.progress.blocksTotal, 0, 'nothing is missing any more');
  assert.equal((await waitForJob(node, retried.id, ['completed', 'failed'])).state, 'completed');
  assertOncePerBlock(await appliesPerBlock(node, 'od'), 0, start - 1);

  // The rules, each named; bad input in the spec's error shape.
  const liveOnly = await admin(node, 'POST', JOBS, { processor: 'blobs', fromBlock: 0, toBlock: 1, mode: 'fill_missing', idempotencyKey: 'x' });
  assert.equal(liveOnly.status, 422);
  assert.match(liveOnly.json.error.message, /history_control = "node_owned" and history_mode = "on_demand"/);
  const unfinalized = await admin(node, 'POST', JOBS, { processor: 'od', fromBlock: 0, toBlock: 10_000_000, mode: 'fill_missing', idempotencyKey: 'y' });
  assert.equal(unfinalized.status, 409);
  assert.match(unfinalized.json.error.message, /finalized/);
  for (const bad of [{ processor: 'od', fromBlock: 5, toBlock: 4, mode: 'fill_missing', idempotencyKey: 'z' }, { processor: 'od', fromBlock: -1, toBlock: 4, mode: 'fill_missing', idempotencyKey: 'z' },
    { processor: 'od', fromBlock: 0, toBlock: 4, mode: 'recompute', idempotencyKey: 'z' }, { processor: 'od', fromBlock: '0', toBlock: 4, mode: 'fill_missing', idempotencyKey: 'z' }, {}]) {
    const answer = await admin(node, 'POST', JOBS, bad);
    assert.equal(answer.status, 400, JSON.stringify(bad));
    assert.equal(answer.json.error.code, 'invalid_request');
    assert.equal(typeof answer.json.error.requestId, 'string');
  }
  assert.equal((await admin(node, 'POST', JOBS, { processor: 'nope', fromBlock: 0, toBlock: 1, mode: 'fill_missing', idempotencyKey: 'n' })).status, 404);
  assert.equal((await admin(node, 'GET', `${JOBS}/constructor`)).status, 404);
  assert.equal((await admin(node, 'POST', `${JOBS}/mj-000000000000-00000000/cancel`)).status, 404);
  assert.equal((await admin(node, 'POST', '/admin/v1/sources/nope/probe')).status, 404);

  // The probe: what the devnet source serves, with a verified sample block.
  const probe = await admin(node, 'POST', '/admin/v1/sources/devnet/probe');
  assert.equal(probe.status, 200);
  assert.equal(probe.json.chainId, 1337);
  assert.equal(probe.json.earliestBlock, 0);
  assert.ok(probe.json.latestBlock >= start);
  assert.equal(probe.json.receiptsAvailable, true);
  assert.equal(probe.json.sampleBlock.verified, true);
  assert.equal(typeof probe.json.latencyMs, 'number');

  // Admin traffic leaves JSON-RPC alone.
  const rpc = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }) });
  assert.equal(rpc.status, 200);
});

test('kill -9 during materialization jobs, several trials: each job resumes after the restart, and the coverage has no gap and no block processed twice', async (t) => {
  const TRIALS = 3;
  const SPAN = 40;
  let node = await nodeWithHistory(TRIALS * SPAN + 5, historyToml(DEVNET_SOURCE, 1));
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  const { dir } = node;
  await waitUntil(node, async () => (await coverage(node, 'od')).finalizedThrough !== null, 60_000);
  let interrupted = 0;
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const from = trial * SPAN;
    const created = await createJob(node, { processor: 'od', fromBlock: from, toBlock: from + SPAN - 1, idempotencyKey: `trial-${trial}` });
    let seen = await job(node, created.id);
    while (seen.state !== 'completed' && seen.progress.blocksDone < 2 + trial * 7) seen = await job(node, created.id);
    if (seen.state !== 'completed') interrupted += 1;
    await node.stop('SIGKILL');
    node = await startNodeProcess({ dir, toml: historyToml(DEVNET_SOURCE, 1), sets: FAST });
    const done = await waitForJob(node, created.id, ['completed', 'failed']);
    assert.equal(done.state, 'completed', JSON.stringify(done.lastError));
    assert.equal(done.progress.blocksDone, SPAN);
    assert.deepEqual(missingIn(await coverage(node, 'od'), 0, from + SPAN - 1), [], `trial ${trial}: no gap`);
    assertOncePerBlock(await appliesPerBlock(node, 'od'), 0, from + SPAN - 1);
  }
  t.diagnostic(`${interrupted} of ${TRIALS} jobs were killed mid-way`);
  assert.ok(interrupted >= 1, 'at least one job was interrupted by kill -9');
  assert.equal(await node.stop('SIGTERM'), 0);
  const verify = await runCli(['db', 'verify', '--data-dir', node.dataDir]);
  assert.equal(verify.code, 0, `db verify after the kill -9 trials:\n${verify.stdout}${verify.stderr}`);
});
