/**
 * Cold backfills against the real node on the devnet: a node runs `blobs` and `erc20` live from the devnet's first
 * block, stops, and restarts with two new instances whose start_block = 0 (`cb`: blobs, `cbe`: erc20) beside a
 * devnet history source. Each is backfilled from the source while its live lane starts at the finalized block:
 * states backfilling → (catching_up →) live, historicalTargetBlock the target, coverage one interval from 0 to the
 * head, rows equal to the instances that processed every block live (byte-identical blobs answers, equal erc20
 * balances). Kill -9 during a backfill (several trials, each a new instance) resumes with no gap and no block
 * applied twice. An rpc history source that is down, then serves one tampered block, fails the backfill's chunk
 * (never covered), the job names the block and the instance reports `degraded`; DELETE of the failed job is the
 * retry boundary, after which the backfill completes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, runCli, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { asksReceiptsOf, flipFirstReceiptStatus, startRpcProxy } from '../support/rpc-proxy.js';
import { admin, appliesPerBlock, assertOncePerBlock, balances, FAST, JOBS, missingIn, type Job } from './history-support.js';

const TOKENS = 'tokens = ["0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506", "0xc9bbd8575d55bf87fce6040031aaa9b3b4b90eae", "0x0fcde9daaf8b24c5b8f5b7b990d2489038e205bd"]';
const LIVE = ['[[processors]]', 'id = "blobs"', 'kind = "blobs"', '[[processors]]', 'id = "erc20"', 'kind = "erc20"', TOKENS];

interface Status {
  available: Array<{ fromBlock: number; toBlock: number; finality: string }>;
  finalizedThrough: number | null; historicalTargetBlock: number | null; state: string; configuredStartBlock: number; complete: boolean;
  reduceCursor?: { number: number; hash: string } | null;
}

function toml(chunkBlocks: number, extra: readonly string[]): string {
  return ['[history]', `chunk_blocks = ${chunkBlocks}`, '[[sources.history]]', 'id = "devnet"', 'kind = "devnet"', ...LIVE, ...extra, ''].join('\n');
}

const blobsAt0 = (id: string) => ['[[processors]]', `id = "${id}"`, 'kind = "blobs"', 'start_block = 0'];
const erc20At0 = (id: string) => ['[[processors]]', `id = "${id}"`, 'kind = "erc20"', TOKENS, 'start_block = 0'];

async function status(node: NodeProcess, processor: string): Promise<Status> {
  return ((await (await fetch(`${node.baseUrl}/v1/processors/${processor}/status`)).json()) as { coverage: Status }).coverage;
}

/** Runs the devnet with the live instances until `finalized` blocks are final, and stops it. */
async function chainWithHistory(finalized: number): Promise<string> {
  const first = await startNodeProcess({ toml: ['[history]', ...LIVE, ''].join('\n'), sets: FAST });
  try {
    await waitUntil(first, async () => ((await status(first, 'erc20')).finalizedThrough ?? 0) >= finalized, 120_000);
  } finally {
    assert.equal(await first.stop(), 0);
  }
  return first.dir;
}

/** The states the node logged for an instance, in order. */
function loggedStates(node: NodeProcess, instance: string): string[] {
  const states: string[] = [];
  for (const line of node.output) {
    if (!line.includes('"processor state"')) continue;
    const record = JSON.parse(line) as { instance?: string; state?: string };
    if (record.instance === instance && record.state !== undefined) states.push(record.state);
  }
  return states;
}

async function coldJob(node: NodeProcess, instance: string): Promise<Job & { purpose?: string }> {
  return (await admin(node, 'GET', `${JOBS}/cb-${instance}`)).json as Job & { purpose?: string };
}

test('cold backfill: new blobs and erc20 instances with start_block = 0 are backfilled from the devnet history source while live; states, target, one coverage interval, rows equal to live processing', async (t) => {
  const dir = await chainWithHistory(80);
  const node = await startNodeProcess({ dir, toml: toml(16, [...blobsAt0('cb'), ...erc20At0('cbe')]), sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(dir); });

  // Processor lanes are not required for readiness: each reports its target once its lane has started.
  await waitUntil(node, async () => (await status(node, 'cbe')).historicalTargetBlock !== null && (await status(node, 'cb')).historicalTargetBlock !== null, 60_000);
  // Each lane splits at the finalized block it found when it started (the two may start a block or two apart).
  const targets = new Map<string, number>();
  for (const instance of ['cb', 'cbe']) {
    const early = await status(node, instance);
    assert.ok(early.historicalTargetBlock !== null && early.historicalTargetBlock >= 80, `${instance}: historicalTargetBlock reports the target (${early.historicalTargetBlock})`);
    assert.equal(early.configuredStartBlock, 0);
    targets.set(instance, early.historicalTargetBlock);
  }
  const target = Math.max(...targets.values());

  for (const instance of ['cb', 'cbe']) {
    await waitUntil(node, async () => (await coldJob(node, instance)).state === 'completed' && (await status(node, instance)).state === 'live', 120_000);
    const job = await coldJob(node, instance);
    assert.equal(job.purpose, 'cold_backfill');
    assert.deepEqual([job.fromBlock, job.toBlock], [0, targets.get(instance)]);
    assert.equal(job.progress.blocksDone, job.progress.blocksTotal);
    assert.equal(job.progress.blocksTotal, targets.get(instance)! + 1);
    const seconds = (Date.parse((job as unknown as { finishedAt: string }).finishedAt) - Date.parse((job as unknown as { startedAt: string }).startedAt)) / 1000;
    t.diagnostic(`${instance}: ${job.progress.blocksTotal} blocks backfilled in ${seconds} s (${Math.round(job.progress.blocksTotal / Math.max(seconds, 0.001))} blocks/s, shared machine)`);
  }
  // The order the node went through (from its log): ordered-state holds its live lane, then catches up.
  assert.deepEqual(loggedStates(node, 'cbe').filter((s, i, all) => all.indexOf(s) === i), ['backfilling', 'catching_up', 'live'], `cbe states: ${loggedStates(node, 'cbe').join(' → ')}`);
  const cbStates = loggedStates(node, 'cb');
  assert.equal(cbStates.at(-1), 'live');
  assert.ok(cbStates.indexOf('live') > cbStates.indexOf('backfilling') || (await status(node, 'cb')).state === 'live', `cb states: ${cbStates.join(' → ')}`);

  // Coverage: one interval from start_block to the head, past the target.
  for (const instance of ['cb', 'cbe']) {
    await waitUntil(node, async () => ((await status(node, instance)).finalizedThrough ?? 0) >= target + 6, 60_000);
    const cov = await status(node, instance);
    const last = cov.available.at(-1)!.toBlock;
    assert.equal(cov.available[0]!.fromBlock, 0);
    assert.deepEqual(missingIn(cov, 0, last), [], `${instance}: no gap from 0 to ${last}: ${JSON.stringify(cov.available)}`);
    assert.equal(cov.complete, true);
    assert.equal(cov.historicalTargetBlock, targets.get(instance));
  }

  // Blobs: byte-identical answers to the instance that processed every block live.
  const live = await status(node, 'blobs');
  const from = live.available[0]!.fromBlock;
  assert.ok(from <= 1, `the live blobs instance started at the devnet's first block (${from})`);
  for (let n = from; n <= target + 6; n += 1) {
    const [a, b] = await Promise.all(['blobs', 'cb'].map(async (p) => (await fetch(`${node.baseUrl}/v1/processors/${p}/query/blobs/blocks/${n}`)).text()));
    assert.equal(b, a, `block ${n}: the backfilled row equals the live row`);
  }
  assertOncePerBlock(await appliesPerBlock(node, 'cb'), 0, target + 6);

  // Erc20: equal balances, read at the same reduce cursor.
  let compared = 0;
  await waitUntil(node, async () => {
    const [a, b] = await Promise.all([balances(node, 'erc20'), balances(node, 'cbe')]);
    if (a.cursor === null || a.cursor !== b.cursor) return false;
    assert.ok(a.rows.size > 0, 'the devnet tokens have holders');
    assert.deepEqual(b.rows, a.rows, `balances at block ${a.cursor}`);
    compared = a.rows.size;
    return true;
  }, 60_000);
  t.diagnostic(`targets ${JSON.stringify([...targets])}; ${compared} erc20 balances equal`);
});

test('kill -9 during cold backfills, several trials (a new instance each): the backfill resumes, coverage has no gap, no block is applied twice', async (t) => {
  const TRIALS = 3;
  const dir = await chainWithHistory(120);
  const extra = (trial: number) => Array.from({ length: trial + 1 }, (_, i) => [...blobsAt0(`k${i}`), ...erc20At0(`ke${i}`)]).flat();
  let node: NodeProcess | null = null;
  t.after(async () => { await node?.stop('SIGKILL'); removeDir(dir); });
  let interrupted = 0;
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const [blobs, erc20] = [`k${trial}`, `ke${trial}`];
    // This start adds the trial's instances: their backfills begin now.
    node = await startNodeProcess({ dir, toml: toml(1, extra(trial)), sets: FAST });
    let seen = await coldJob(node, blobs);
    while (seen.state !== 'completed' && (seen.progress?.blocksDone ?? 0) < 3 + trial * 20) seen = await coldJob(node, blobs);
    if (seen.state !== 'completed') interrupted += 1;
    await node.stop('SIGKILL');
    node = await startNodeProcess({ dir, toml: toml(1, extra(trial)), sets: FAST });
    for (const instance of [blobs, erc20]) {
      await waitUntil(node, async () => (await coldJob(node!, instance)).state === 'completed' && (await status(node!, instance)).state === 'live', 120_000);
      const cov = await status(node, instance);
      assert.equal(cov.available[0]!.fromBlock, 0);
      assert.deepEqual(missingIn(cov, 0, cov.available.at(-1)!.toBlock), [], `trial ${trial} ${instance}: no gap: ${JSON.stringify(cov.available)}`);
    }
    const target = (await status(node, blobs)).historicalTargetBlock!;
    assertOncePerBlock(await appliesPerBlock(node, blobs), 0, target);
    // Erc20 applied twice would double balances: equal to the live instance at the same cursor.
    const current = node;
    await waitUntil(current, async () => {
      const [a, b] = await Promise.all([balances(current, 'erc20'), balances(current, erc20)]);
      if (a.cursor === null || a.cursor !== b.cursor) return false;
      assert.deepEqual(b.rows, a.rows, `trial ${trial}: balances at block ${a.cursor}`);
      return true;
    }, 60_000);
    if (trial < TRIALS - 1) assert.equal(await node.stop('SIGTERM'), 0);
  }
  t.diagnostic(`${interrupted} of ${TRIALS} cold backfills were killed mid-way`);
  assert.ok(interrupted >= 1, 'at least one backfill was interrupted by kill -9');
  assert.equal(await node!.stop('SIGTERM'), 0);
  const verify = await runCli(['db', 'verify', '--data-dir', node!.dataDir]);
  assert.equal(verify.code, 0, `db verify after the kill -9 trials:\n${verify.stdout}${verify.stderr}`);
});

/** A JSON-RPC upstream in front of `target` (502 until it is set) that can flip one block's first receipt status. */
async function startUpstream() {
  let target = '';
  let tampered: number | null = null;
  const proxy = await startRpcProxy(() => target, (call, answer) => {
    if (tampered === null || !asksReceiptsOf(call, tampered)) return;
    flipFirstReceiptStatus(answer);
  });
  return {
    url: proxy.url,
    setTarget: (url: string) => { target = url; },
    tamperReceipts: (block: number | null) => { tampered = block; },
    close: () => proxy.close(),
  };
}

test('a cold backfill from an rpc history source that is down, then serves a tampered block: the chunk is never covered, the job names the block, the instance is degraded; DELETE retries and it completes', async (t) => {
  const dir = await chainWithHistory(60);
  const upstream = await startUpstream();
  t.after(() => upstream.close());
  const source = ['[[sources.history]]', 'id = "archive"', 'kind = "rpc"', `url = "${upstream.url}"`, 'source_concurrency = 2', 'batch_blocks = 4', 'max_retries = 0'];
  const config = ['[history]', 'chunk_blocks = 8', ...source, ...LIVE, ...blobsAt0('cb'), ''].join('\n');
  const node = await startNodeProcess({ dir, toml: config, sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(dir); });
  const target = (await status(node, 'cb')).historicalTargetBlock!;
  assert.ok(target >= 60);

  // The upstream answers 502 until it has a target: the job fails, nothing is covered below the live lane.
  await waitUntil(node, async () => (await coldJob(node, 'cb')).state === 'failed' && (await status(node, 'cb')).state === 'degraded', 60_000);
  assert.deepEqual(missingIn(await status(node, 'cb'), 0, target).length, target + 1);

  // Served, with block 30's receipts tampered: the chunks above commit, the one holding 30 fails and names it.
  upstream.setTarget(node.rpcUrl);
  upstream.tamperReceipts(30);
  assert.equal((await admin(node, 'DELETE', `${JOBS}/cb-cb`)).status, 204);
  await waitUntil(node, async () => (await coldJob(node, 'cb')).state === 'failed', 60_000);
  const failed = await coldJob(node, 'cb');
  assert.equal(failed.lastError?.blockNumber, 30, JSON.stringify(failed.lastError));
  assert.match(failed.lastError!.message, /receipts/);
  const cov = await status(node, 'cb');
  assert.ok(missingIn(cov, 0, target).includes(30), 'the tampered block is never covered');
  assert.deepEqual(missingIn(cov, 31, target).filter((n) => n > 31 + 8), [], 'the chunks above it committed');
  await waitUntil(node, async () => (await status(node, 'cb')).state === 'degraded', 30_000);

  // The source is right again; DELETE is the retry boundary: the backfill completes.
  upstream.tamperReceipts(null);
  assert.equal((await admin(node, 'DELETE', `${JOBS}/cb-cb`)).status, 204);
  await waitUntil(node, async () => (await coldJob(node, 'cb')).state === 'completed' && (await status(node, 'cb')).state === 'live', 60_000);
  const done = await status(node, 'cb');
  assert.deepEqual(missingIn(done, 0, done.available.at(-1)!.toBlock), []);
  assertOncePerBlock(await appliesPerBlock(node, 'cb'), 0, target);
  for (let n = 1; n <= target; n += 1) {
    const [a, b] = await Promise.all(['blobs', 'cb'].map(async (p) => (await fetch(`${node.baseUrl}/v1/processors/${p}/query/blobs/blocks/${n}`)).text()));
    assert.equal(b, a, `block ${n}: the backfilled row equals the live row`);
  }
  // The source asked for raw blocks (encoding = auto against a node, which serves the raw getters).
  const probe = await admin(node, 'POST', '/admin/v1/sources/archive/probe');
  assert.equal(probe.status, 200, JSON.stringify(probe.json));
  assert.equal(probe.json.blockEncoding, 'raw');
});
