/**
 * A node that needs no RPC at all, from the example configs as shipped (only their ports made free, the devnet made
 * fast, and an erc20 instance on the producer to compare with): examples/devnet-serve-p2p.toml produces the devnet
 * and serves it over RLPx and as a consensus libp2p peer; examples/p2p-no-rpc-devnet.toml follows it with
 * `[sources.live] kind = "p2p"` starting at the first block `consensus_p2p` finality proves (light-client proof
 * from the devnet's genesis checkpoint), and the peers as its only history source. Its chain begins at that block;
 * its erc20 instance from block 0 is cold-backfilled below it from the peers alone, to one coverage interval from 0
 * and the producer's balances (which followed every block live), readiness as with rpc history. A second such
 * node with no processor from block 0 answers eth_getLogs (and a block) below its chain on demand from the peers,
 * equal to the producer's answers from its live store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../actors/node/config.js';
import { freePort } from '../support/ports.js';
import { PROJECT_ROOT } from '../support/paths.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { admin, balances, JOBS, rpcCall, type Job } from './history-support.js';

const SERVE = join(PROJECT_ROOT, 'examples', 'devnet-serve-p2p.toml');
const NO_RPC = join(PROJECT_ROOT, 'examples', 'p2p-no-rpc-devnet.toml');
/** The chain both nodes share (the [devnet] settings define it), fast. */
const DEVNET = ['devnet.block_time_ms=150', 'devnet.transactions_per_block=6', 'devnet.reorg_every=0', 'devnet.finality_lag=4', 'runtime.shutdown_timeout_seconds=3', 'runtime.pool_threads=1'];

interface Status { state: string; finalizedThrough: number | null; available: Array<{ fromBlock: number; toBlock: number }> }
async function coverageOf(node: NodeProcess, processor: string): Promise<Status> {
  return ((await (await fetch(`${node.baseUrl}/v1/processors/${processor}/status`)).json()) as { coverage: Status }).coverage;
}

async function firstRecordedBlock(node: NodeProcess): Promise<number> {
  const status = (await (await fetch(`${node.baseUrl}/v1/network/status`)).json()) as { storedRange: { from: number } | null };
  return status.storedRange?.from ?? -1;
}

test('the no-RPC example begins at the finalized block consensus_p2p proves, and backfills its erc20 instance from block 0 from the peers to the producer\'s balances', async (t) => {
  const example = loadConfig(NO_RPC).config;
  assert.deepEqual([example.sources.live.kind, example.sources.live.start, example.finality.kind], ['p2p', 'finalized', 'consensus_p2p']);
  assert.deepEqual(example.sources.history.map((source) => source.kind), ['p2p'], 'no rpc history source');

  const [p2pPort, beaconPort] = [await freePort(), await freePort()];
  const ports = (text: string) => text.replaceAll('127.0.0.1:30303', `127.0.0.1:${p2pPort}`).replaceAll('127.0.0.1:9100', `127.0.0.1:${beaconPort}`);
  const compare = ['[[processors]]', 'id = "erc20"', 'kind = "erc20"', 'tokens = "*"', ''].join('\n');
  const producer = await startNodeProcess({ toml: `${ports(readFileSync(SERVE, 'utf8'))}\n${compare}`, sets: DEVNET });
  t.after(async () => { await producer.stop(); removeDir(producer.dir); });
  // Some history below the follower's start.
  await waitUntil(producer, async () => ((await coverageOf(producer, 'erc20')).finalizedThrough ?? 0) >= 40, 60_000);

  const node = await startNodeProcess({ toml: ports(readFileSync(NO_RPC, 'utf8')), sets: DEVNET, readyTimeoutMs: 120_000 });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  const cold = async () => (await admin(node, 'GET', `${JOBS}/cb-erc20`)).json as Job & { purpose?: string };
  const readiness: number[] = [];
  const notReady: string[] = [];
  await waitUntil(node, async () => {
    const answer = await fetch(`${node.baseUrl}/health/ready`);
    readiness.push(answer.status);
    if (answer.status !== 200) notReady.push(await answer.text());
    else await answer.body?.cancel();
    return (await cold()).state === 'completed' && (await coverageOf(node, 'erc20')).state === 'live';
  }, 180_000);
  const begins = await firstRecordedBlock(node);
  assert.ok(begins >= 40, `the chain begins at a finalized block far above genesis (${begins})`);
  const job = await cold();
  assert.deepEqual([job.source, job.purpose, job.fromBlock, job.lastError], ['peers', 'cold_backfill', 0, null]);
  assert.ok(job.toBlock >= begins && job.progress.blocksDone === job.progress.blocksTotal, JSON.stringify(job));
  assert.deepEqual([...new Set(readiness)], [200], `ready throughout the backfill, as with rpc history; not ready: ${notReady.slice(0, 3).join(' | ')}`);
  const cov = await coverageOf(node, 'erc20');
  // One run from block 0 (its finalized and included parts), no gap.
  assert.equal(cov.available[0]!.fromBlock, 0, JSON.stringify(cov.available));
  cov.available.slice(1).forEach((part, i) => assert.equal(part.fromBlock, cov.available[i]!.toBlock + 1, JSON.stringify(cov.available)));
  // The same balances as the producer's live instance, read at the same block.
  await waitUntil(node, async () => {
    const [mine, theirs] = await Promise.all([balances(node, 'erc20'), balances(producer, 'erc20')]);
    if (mine.cursor === null || mine.cursor !== theirs.cursor) return false;
    assert.ok(mine.rows.size > 0, 'the devnet tokens have holders');
    assert.deepEqual(mine.rows, theirs.rows, `balances at block ${mine.cursor}`);
    return true;
  }, 90_000);
  // The backfilled blocks' transactions are found by hash once the job completed (its index is written in batches,
  // actors/history/tx-index-batch.ts), with the producer's answers.
  const hashes: string[] = [];
  for (const n of [1, Math.floor(begins / 2), begins - 1]) {
    const theirs = await rpcCall<{ transactions: string[] }>(producer, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);
    hashes.push(...theirs.transactions.slice(0, 1), ...theirs.transactions.slice(-1));
  }
  assert.ok(hashes.length > 0, 'the backfilled blocks have transactions');
  for (const hash of hashes) {
    for (const method of ['eth_getTransactionByHash', 'eth_getTransactionReceipt']) {
      const [mine, theirs] = await Promise.all([rpcCall(node, method, [hash]), rpcCall(producer, method, [hash])]);
      assert.ok(mine !== null, `${method}(${hash}) below the chain's first block`);
      assert.deepEqual(mine, theirs, `${method}(${hash})`);
    }
  }

  // On-demand JSON-RPC history over the peers: a second no-RPC node without the backfilling instance begins at its
  // finalized block too; eth_getLogs below it is fetched from the peers, verified, and equals the producer's answer.
  const bare = ports(readFileSync(NO_RPC, 'utf8')).replace(/\n\[\[processors\]\][\s\S]*$/, '\n');
  const second = await startNodeProcess({ toml: bare, sets: DEVNET, readyTimeoutMs: 120_000 });
  t.after(async () => { await second.stop(); removeDir(second.dir); });
  const start = await firstRecordedBlock(second);
  assert.ok(start > 20, `the second node begins at ${start}`);
  const range = { fromBlock: '0x1', toBlock: `0x${(start - 1).toString(16)}` };
  const [theirs, mine] = await Promise.all([rpcCall<unknown[]>(producer, 'eth_getLogs', [range]), rpcCall<unknown[]>(second, 'eth_getLogs', [range])]);
  assert.ok(theirs.length > 0, 'the range has logs');
  assert.deepEqual(mine, theirs, `eth_getLogs over blocks 1-${start - 1}, below the second node's chain, from the peers`);
  const block = `0x${Math.floor(start / 2).toString(16)}`;
  assert.deepEqual(await rpcCall(second, 'eth_getBlockByNumber', [block, true]), await rpcCall(producer, 'eth_getBlockByNumber', [block, true]));
});
