/**
 * An rpc follower and reorganisations of the first blocks it records (issue 28, point 1), through real processes:
 * node A runs the devnet with a reorg every 3 blocks; node B follows A over JSON-RPC from A's head ~5. A follower that
 * began at the upstream head was stranded by the first reorg of that block (its source degraded for good, every
 * processor with it); it must instead begin where such a reorg cannot strand it and follow A through the reorgs.
 * And a store whose recorded chain begins at an unfinalized block the upstream no longer has — what a stranded
 * follower of an earlier version leaves behind — must recover on start: the chain is replaced from that block up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { blockNumber, rpcCall } from './history-support.js';

/** Every fork at genesis, so the follower takes the schedule from A's eth_config. */
const FORKS_AT_GENESIS = ['devnet.prague_after_seconds=0', 'devnet.osaka_after_seconds=0', 'devnet.bpo1_after_seconds=0'];
const QUIET = ['runtime.pool_threads=1', 'runtime.shutdown_timeout_seconds=3'];

function followerToml(upstream: string): string {
  return [
    '[sources.live]', 'kind = "rpc"', `url = "${upstream}"`, 'poll_interval_ms = 100',
    '[finality]', 'kind = "rpc"', 'poll_interval_ms = 200',
    '[[processors]]', 'id = "blobs"', 'kind = "blobs"', '',
  ].join('\n');
}

async function hashAt(node: NodeProcess, number: number): Promise<string | null> {
  const block = await rpcCall<{ hash: string } | null>(node, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false]);
  return block?.hash ?? null;
}

async function metric(node: NodeProcess, name: string): Promise<number> {
  const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

interface Status { state: string; stateReason: string | null }

/** The blobs instance's state and its reason (its coverage, spec §2.1). */
async function processorStatus(node: NodeProcess): Promise<Status> {
  return ((await (await fetch(`${node.baseUrl}/v1/processors/blobs/status`)).json()) as { coverage: Status }).coverage;
}

/** B is ready, its blobs instance not degraded, and every block B holds up to `through` is A's. */
async function assertFollows(follower: NodeProcess, upstream: NodeProcess, from: number, through: number): Promise<void> {
  const ready = await fetch(`${follower.baseUrl}/health/ready`);
  assert.equal(ready.status, 200, await ready.text());
  const status = await processorStatus(follower);
  assert.notEqual(status.state, 'degraded', JSON.stringify(status));
  assert.notEqual(status.state, 'failed', JSON.stringify(status));
  for (let n = from; n <= through; n += 1) {
    const [ours, theirs] = await Promise.all([hashAt(follower, n), hashAt(upstream, n)]);
    assert.equal(ours, theirs, `block ${n}: the follower holds the upstream's block`);
  }
}

/** The lowest block the follower serves (its recorded chain's first block). */
async function firstServed(node: NodeProcess): Promise<number> {
  const earliest = await rpcCall<{ number: string }>(node, 'eth_getBlockByNumber', ['earliest', false]);
  return Number(BigInt(earliest.number));
}

test('a fresh rpc follower started at the head of a chain that reorganises every 3 blocks follows it through the reorgs', async (t) => {
  const upstream = await startNodeProcess({ sets: [...FORKS_AT_GENESIS, 'devnet.reorg_every=3', 'devnet.reorg_depth=2', 'devnet.block_time_ms=2000', ...QUIET] });
  t.after(async () => { await upstream.stop('SIGKILL'); removeDir(upstream.dir); });
  // The devnet replaces blocks 3k-1 and 3k right after it reaches 3k (net/devnet/devnet.ts): started as A reaches
  // 3k-1, B's first poll sees a head that is abandoned two blocks (4 s) later — the head a stranded follower began at.
  await waitUntil(upstream, async () => {
    const head = await blockNumber(upstream);
    return head >= 5 && head % 3 === 2;
  }, 60_000);

  const follower = await startNodeProcess({ toml: followerToml(upstream.rpcUrl), sets: QUIET });
  t.after(async () => { await follower.stop('SIGKILL'); removeDir(follower.dir); });
  const startedAt = await blockNumber(upstream);
  // Two reorgs of A later (one every 3 blocks), B still follows: its head keeps up with A's.
  await waitUntil(follower, async () => (await blockNumber(follower)) >= startedAt + 6 && (await metric(follower, 'chain_node_rpc_source_reorgs_total')) >= 2, 120_000);
  const first = await firstServed(follower);
  assert.ok(first <= startedAt - 2, `the follower began below the head it saw (${first} <= ${startedAt} - 2), where a reorg of depth 2 cannot strand it`);
  // Blocks A has finalized are settled on both: compare every one B holds.
  const finalized = Number(BigInt((await rpcCall<{ number: string }>(upstream, 'eth_getBlockByNumber', ['finalized', false])).number));
  await waitUntil(follower, async () => (await fetch(`${follower.baseUrl}/health/ready`)).status === 200 && (await processorStatus(follower)).state === 'live', 60_000);
  await assertFollows(follower, upstream, first, finalized);
});

test('a store whose chain begins at an unfinalized block the upstream no longer has is replaced from that block when the node starts', async (t) => {
  // Upstream 1: no finality within reach (lag 40), so the follower's first block stays unfinalized.
  const producer = ['devnet.finality_lag=40', 'devnet.reorg_every=0', 'devnet.block_time_ms=150', ...FORKS_AT_GENESIS, ...QUIET];
  const one = await startNodeProcess({ sets: producer });
  t.after(async () => { await one.stop('SIGKILL'); removeDir(one.dir); });
  await waitUntil(one, async () => (await blockNumber(one)) >= 12, 60_000);

  // The follower keeps at most 3 blocks of reorg, so it begins 3 below upstream 1's head (no finalized block that high).
  let follower = await startNodeProcess({ toml: followerToml(one.rpcUrl), sets: ['chain.max_reorg_depth=3', ...QUIET] });
  t.after(async () => { await follower.stop('SIGKILL'); removeDir(follower.dir); });
  const began = await firstServed(follower);
  assert.ok(began > 0, `began above genesis (${began})`);
  const oldHash = await hashAt(follower, began);
  assert.equal(oldHash, await hashAt(one, began));
  assert.equal(await follower.stop(), 0);
  const genesis = await hashAt(one, 0);
  await one.stop();

  // Upstream 2: the same genesis and schedule, other transactions: every block after genesis differs.
  const two = await startNodeProcess({ sets: [...producer, 'devnet.transactions_per_block=5'] });
  t.after(async () => { await two.stop('SIGKILL'); removeDir(two.dir); });
  // Ready comes before the chain lane has journaled genesis on a busy machine: wait for block 0 to be served.
  await waitUntil(two, async () => (await hashAt(two, 0)) !== null, 60_000);
  assert.equal(await hashAt(two, 0), genesis, 'the same genesis');
  await waitUntil(two, async () => (await blockNumber(two)) >= began + 8, 60_000);

  follower = await startNodeProcess({ dir: follower.dir, toml: followerToml(two.rpcUrl), sets: QUIET, readyTimeoutMs: 60_000 });
  await waitUntil(follower, async () => (await hashAt(follower, began)) === (await hashAt(two, began)) && (await processorStatus(follower)).state === 'live', 60_000);
  assert.notEqual(await hashAt(follower, began), oldHash, 'the abandoned first block was replaced');
  assert.equal(await firstServed(follower), began, 'the chain still begins at that number');
  assert.ok(follower.output.some((line) => line.includes('abandoned the unfinalized block this chain began at')), 'the chain lane says what it did');
  await assertFollows(follower, two, began, began + 6);
});
