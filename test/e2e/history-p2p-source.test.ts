/**
 * `[[sources.history]] kind = "p2p"` through real processes: one node produces the devnet and serves it over RLPx
 * (`[devnet] p2p_listen`); a second node follows it with `[sources.live] kind = "p2p"` and has only the peers as its
 * history source. Its probe answers from the peers (their range, a sample block verified); a new erc20 instance with
 * start_block = 0 is cold-backfilled from the peers (history requests on the peers lane's history budget) to the
 * same balances as the instance that processed every block live, and a blobs one applies each block once; kill -9
 * during a p2p backfill resumes it with no gap and no block applied twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { devnetPeerKey } from '../../net/devnet/p2p-server.js';
import { formatEnode, nodeIdOf } from '../../net/p2p/enode.js';
import { freePort } from '../support/ports.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { admin, appliesPerBlock, assertOncePerBlock, balances, JOBS, type Job } from './history-support.js';

const DEVNET = ['devnet.block_time_ms=100', 'devnet.transactions_per_block=6', 'devnet.reorg_every=7', 'devnet.reorg_depth=2', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'runtime.pool_threads=1'];
const TOKENS = 'tokens = ["0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506", "0xc9bbd8575d55bf87fce6040031aaa9b3b4b90eae", "0x0fcde9daaf8b24c5b8f5b7b990d2489038e205bd"]';

async function metric(node: NodeProcess, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)\{(.*)\} (\S+)$/.exec(line);
    if (match?.[1] === name && Object.entries(labels).every(([k, v]) => match[2]!.split(',').includes(`${k}=${JSON.stringify(v)}`))) sum += Number(match[3]);
  }
  return sum;
}

async function coverageOf(node: NodeProcess, processor: string): Promise<{ state: string; finalizedThrough: number | null; available: Array<{ fromBlock: number; toBlock: number }> }> {
  return ((await (await fetch(`${node.baseUrl}/v1/processors/${processor}/status`)).json()) as { coverage: { state: string; finalizedThrough: number | null; available: Array<{ fromBlock: number; toBlock: number }> } }).coverage;
}

test('a p2p history source: the probe answers from the peers, a cold backfill from them equals live processing, and kill -9 mid-backfill resumes with no gap and no block twice', async (t) => {
  const port = await freePort();
  const producer = await startNodeProcess({ sets: [...DEVNET, `devnet.p2p_listen=127.0.0.1:${port}`] });
  t.after(async () => { await producer.stop(); removeDir(producer.dir); });
  const enode = formatEnode(nodeIdOf(devnetPeerKey('chain-data-node')), '127.0.0.1', port);
  const withChunk = (chunkBlocks: number) => [
    '[sources.live]', 'kind = "p2p"', `trusted_peers = ["${enode}"]`, 'poll_interval_ms = 100', '[finality]', 'kind = "devnet"',
    '[history]', `chunk_blocks = ${chunkBlocks}`, '[[sources.history]]', 'id = "peers"', 'kind = "p2p"', 'batch_blocks = 8',
    '[[processors]]', 'id = "erc20"', 'kind = "erc20"', TOKENS,
  ];
  const base = withChunk(16);
  const first = await startNodeProcess({ toml: [...base, ''].join('\n'), sets: DEVNET });
  let dir = first.dir;
  t.after(() => removeDir(dir));
  await waitUntil(first, async () => ((await coverageOf(first, 'erc20')).finalizedThrough ?? 0) >= 60, 120_000);

  const probe = await admin(first, 'POST', '/admin/v1/sources/peers/probe');
  assert.equal(probe.status, 200, JSON.stringify(probe.json));
  assert.equal(probe.json.kind, 'p2p');
  assert.equal(probe.json.peers.connected, 1);
  assert.equal(probe.json.peers.holding, 1);
  assert.equal(probe.json.earliestBlock, 0);
  assert.ok(probe.json.latestBlock >= 60, `the peer announces its head (${probe.json.latestBlock})`);
  assert.equal(probe.json.sampleBlock?.verified, true, JSON.stringify(probe.json));
  assert.equal(probe.json.receiptsAvailable, true);
  assert.equal(await first.stop(), 0);

  // The same store with a new instance from block 0: backfilled from the peers while its live lane follows.
  let node = await startNodeProcess({ dir, toml: [...base, '[[processors]]', 'id = "cbe"', 'kind = "erc20"', TOKENS, 'start_block = 0', '[[processors]]', 'id = "cb"', 'kind = "blobs"', 'start_block = 0', ''].join('\n'), sets: DEVNET });
  dir = node.dir;
  t.after(async () => { await node.stop('SIGKILL'); });
  const stable = [...base.slice(base.indexOf('[[processors]]')), '[[processors]]', 'id = "cbe"', 'kind = "erc20"', TOKENS, 'start_block = 0', '[[processors]]', 'id = "cb"', 'kind = "blobs"', 'start_block = 0'];
  for (const instance of ['cbe', 'cb']) {
    await waitUntil(node, async () => ((await admin(node, 'GET', `${JOBS}/cb-${instance}`)).json as Job).state === 'completed' && (await coverageOf(node, instance)).state === 'live', 120_000);
  }
  const job = (await admin(node, 'GET', `${JOBS}/cb-cbe`)).json as Job & { source: string };
  assert.equal(job.source, 'peers');
  assert.equal(job.fromBlock, 0);
  assert.equal(job.progress.blocksDone, job.progress.blocksTotal);
  assert.ok(await metric(node, 'node_p2p_requests_total', { lane: 'bodies', purpose: 'history', outcome: 'ok' }) > 0, 'bodies were asked of the peers for history');
  assert.ok(await metric(node, 'node_p2p_requests_total', { lane: 'receipts', purpose: 'history', outcome: 'ok' }) > 0, 'receipts too');

  // Equal balances at the same reduce cursor, and every block applied once.
  await waitUntil(node, async () => {
    const [live, backfilled] = await Promise.all([balances(node, 'erc20'), balances(node, 'cbe')]);
    if (live.cursor === null || live.cursor !== backfilled.cursor) return false;
    assert.ok(live.rows.size > 0, 'the devnet tokens have holders');
    assert.deepEqual(backfilled.rows, live.rows, `balances at block ${live.cursor}`);
    return true;
  }, 60_000);
  // The blobs instance's log: each backfilled block applied exactly once.
  const blobsJob = (await admin(node, 'GET', `${JOBS}/cb-cb`)).json as Job & { source: string };
  assert.equal(blobsJob.source, 'peers');
  assertOncePerBlock(await appliesPerBlock(node, 'cb'), 0, blobsJob.toBlock);

  // Kill -9 during a p2p backfill (two trials, a new blobs instance each, one block per chunk so a backfill is many
  // commits): after the restart it resumes, its coverage has no gap and each block is applied once.
  assert.equal(await node.stop('SIGTERM'), 0);
  const trialToml = (trial: number) => [...withChunk(1).slice(0, withChunk(1).indexOf('[[processors]]')), ...stable,
    ...Array.from({ length: trial + 1 }, (_, i) => ['[[processors]]', `id = "k${i}"`, 'kind = "blobs"', 'start_block = 0']).flat(), ''].join('\n');
  let interrupted = 0;
  for (let trial = 0; trial < 2; trial += 1) {
    const instance = `k${trial}`;
    node = await startNodeProcess({ dir, toml: trialToml(trial), sets: DEVNET });
    const current = node;
    const job = async () => (await admin(current, 'GET', `${JOBS}/cb-${instance}`)).json as Job;
    let seen = await job();
    while (seen.state !== 'completed' && (seen.progress?.blocksDone ?? 0) < 5 + trial * 20) seen = await job();
    if (seen.state !== 'completed') interrupted += 1;
    await node.stop('SIGKILL');
    node = await startNodeProcess({ dir, toml: trialToml(trial), sets: DEVNET });
    const restarted = node;
    await waitUntil(restarted, async () => ((await admin(restarted, 'GET', `${JOBS}/cb-${instance}`)).json as Job).state === 'completed' && (await coverageOf(restarted, instance)).state === 'live', 120_000);
    const done = (await admin(restarted, 'GET', `${JOBS}/cb-${instance}`)).json as Job & { source: string };
    assert.equal(done.source, 'peers');
    const cov = await coverageOf(restarted, instance);
    assert.equal(cov.available[0]!.fromBlock, 0, `trial ${trial}: ${JSON.stringify(cov.available)}`);
    assertOncePerBlock(await appliesPerBlock(restarted, instance), 0, done.toBlock);
    if (trial === 0) assert.equal(await restarted.stop('SIGTERM'), 0);
  }
  t.diagnostic(`${interrupted} of 2 p2p backfills were killed mid-way`);
  assert.ok(interrupted >= 1, 'at least one backfill was interrupted by kill -9');
});
