/**
 * A real node process on mainnet with an `era` history source. Its live lane follows a JSON-RPC upstream the test
 * serves from the Era1 fixture itself (mainnet's real blocks 0-8191, rendered by the node's own JSON-RPC renderers;
 * the upstream's head and finalized block is the highest block of the file without uncles, the live rpc source
 * refusing uncles): so the node's chain is mainnet (chain id 1, mainnet's genesis) and its recorded chain starts
 * at that head. Below it, history comes from the Era1 directory: the probe reports the file's range and the merge,
 * a JSON-RPC request for old blocks is filled on demand from the file, a materialization job fills the example
 * gas-stats kind's history from it, and a job past the merge is refused when made.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { createEra1Archive } from '../../net/era/era1-archive.js';
import { createEra1History } from '../../net/era/era1-history.js';
import { mainnetEpochRoots } from '../../net/era/mainnet-epoch-roots.js';
import type { HistoryBlock } from '../../net/history/history-block.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { ERA1_DIR, GENESIS_HASH } from '../net/era/era1-copies.js';
import { admin, coverage, createJob, missingIn, waitForJob } from './history-support.js';
import { serveMainnet } from './mainnet-upstream.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/gas-stats/index.ts', import.meta.url));

async function rpc<T>(node: NodeProcess, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const answer = (await response.json()) as { result?: T; error?: unknown };
  if (answer.error !== undefined) throw new Error(`${method} ${JSON.stringify(params)}: ${JSON.stringify(answer.error)}`);
  return answer.result as T;
}

test('a node following mainnet takes history below its recorded chain from an Era1 directory: probe, on-demand JSON-RPC, a materialization job, and a job past the merge refused', async (t) => {
  const history = createEra1History({ archive: createEra1Archive({ path: ERA1_DIR }), epochRoots: mainnetEpochRoots(), concurrency: 2 });
  const blocks = await history.fetchRange(0, 8191);
  await history.close();
  // The live rpc source refuses blocks with uncles (it follows post-merge chains): the upstream starts at `start`
  // and later moves to `head`, every block of start..head without uncles.
  const withoutUncles = (block: HistoryBlock) => block.material.body.length === 3;
  const head = blocks.findLast((block, i) => blocks.slice(i - 3, i + 1).every(withoutUncles))!.number;
  const start = head - 3;
  const withUncle = blocks.find((block) => !withoutUncles(block))!.number;
  const upstream = await serveMainnet(blocks, start);
  t.after(() => upstream.close());

  const toml = [
    '[[sources.history]]', 'id = "era1"', 'kind = "era"', `path = ${JSON.stringify(ERA1_DIR)}`,
    '[history]', 'chunk_blocks = 1024',
    '[[processors]]', 'id = "gas"', 'kind = "custom"', `module = ${JSON.stringify(EXAMPLE)}`, 'history_mode = "on_demand"', '',
  ].join('\n');
  const node = await startNodeProcess({
    toml, readyTimeoutMs: 120_000,
    sets: ['sources.live.kind=rpc', `sources.live.url=${upstream.url}`, 'sources.live.poll_interval_ms=200', 'finality.kind=rpc', 'finality.poll_interval_ms=200', 'runtime.shutdown_timeout_seconds=3', 'runtime.pool_threads=1'],
  });
  t.after(async () => { await node.stop(); removeDir(node.dir); });

  // The node follows mainnet: its genesis is mainnet's, its recorded chain starts at the upstream's head.
  assert.equal(await rpc<string>(node, 'eth_chainId', []), '0x1');

  const probe = await admin(node, 'POST', '/admin/v1/sources/era1/probe');
  assert.equal(probe.status, 200, JSON.stringify(probe.json));
  assert.deepEqual(
    [probe.json.kind, probe.json.chainId, probe.json.chainIdMatches, probe.json.earliestBlock, probe.json.latestBlock, probe.json.sampleBlock, probe.json.rangeLimit.lastBlock],
    ['era', 1, true, 0, 8191, { number: 0, hash: GENESIS_HASH, verified: true }, 15_537_393],
  );

  // On-demand JSON-RPC history: blocks below the recorded chain, filled from the file and proven by its accumulator.
  const genesis = await rpc<{ hash: string }>(node, 'eth_getBlockByNumber', ['0x0', false]);
  assert.equal(genesis.hash, GENESIS_HASH);
  const old = await rpc<{ hash: string; number: string; uncles: string[] }>(node, 'eth_getBlockByNumber', [`0x${withUncle.toString(16)}`, false]);
  assert.equal(old.hash, blocks[withUncle]!.hash);
  assert.equal(old.uncles.length >= 1, true, 'its uncle is served');

  // The on_demand processor starts at the journal's head: it processes the blocks that come after.
  upstream.setHead(head);
  // A materialization job fills the processor's history below its live start from the file.
  await waitUntil(node, async () => ((await coverage(node, 'gas')).finalizedThrough ?? -1) >= head, 60_000);
  const refused = await admin(node, 'POST', '/admin/v1/materialization-jobs', { processor: 'gas', fromBlock: 15_537_000, toBlock: 15_538_000, mode: 'fill_missing', idempotencyKey: 'past-merge' });
  assert.equal(refused.status, 422, JSON.stringify(refused.json));
  assert.equal(refused.json.error.code, 'unsupported_capability');
  assert.match(refused.json.error.message, /history source 'era1' \(kind era\) cannot serve blocks 15537394-15538000: Era1 files hold the pre-merge chain only/);
  const created = await createJob(node, { processor: 'gas', fromBlock: 0, toBlock: start, idempotencyKey: 'era1-history' });
  const done = await waitForJob(node, created.id, ['completed', 'failed'], 180_000);
  assert.equal(done.state, 'completed', JSON.stringify(done.lastError));
  assert.deepEqual(missingIn(await coverage(node, 'gas'), 0, head), []);
  const page = await (await fetch(`${node.baseUrl}/v1/processors/gas/collections/blocks/entities?fromBlock=1&toBlock=3`)).json() as { data: Array<{ data: { blockNumber: number; blockHash: string; gasLimit: string } }> };
  assert.deepEqual(page.data.map((entity) => [entity.data.blockNumber, entity.data.blockHash]), [1, 2, 3].map((n) => [n, blocks[n]!.hash]));
  assert.equal(page.data[0]!.data.gasLimit, '5000', "mainnet block 1's gas limit");
});
