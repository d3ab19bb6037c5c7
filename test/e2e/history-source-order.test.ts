/**
 * History sources tried in configured order per range, in a real node process on mainnet. Two `[[sources.history]]`:
 * first an `rpc` upstream with expired history (EIP-4444: geth's "pruned history unavailable" below block 4096,
 * genesis kept), then an `era` directory (the Era1 fixture, mainnet's blocks 0-8191). The live lane follows the same
 * upstream (test/e2e/mainnet-upstream.ts), so the recorded chain starts at its head. A materialization job over
 * [0, start] and on-demand JSON-RPC history below block 4096 both go to the upstream first and, for the ranges it
 * cannot serve (expired, or holding a block with uncles, which its JSON answers cannot carry), to the Era1 files:
 * the job completes with every block mainnet's, the upstream having served none below 4096 and many above.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { createEra1Archive } from '../../net/era/era1-archive.js';
import { createEra1History } from '../../net/era/era1-history.js';
import { mainnetEpochRoots } from '../../net/era/mainnet-epoch-roots.js';
import type { HistoryBlock } from '../../net/history/history-block.js';
import { removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';
import { ERA1_DIR } from '../net/era/era1-copies.js';
import { coverage, createJob, missingIn, waitForJob } from './history-support.js';
import { serveMainnet } from './mainnet-upstream.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/gas-stats/index.ts', import.meta.url));
const EXPIRED_BELOW = 4096;

test('each range comes from the first source that serves it: an upstream with expired history, then Era1 files below its expiry', async (t) => {
  const history = createEra1History({ archive: createEra1Archive({ path: ERA1_DIR }), epochRoots: mainnetEpochRoots(), concurrency: 2 });
  const blocks = await history.fetchRange(0, 8191);
  await history.close();
  // The live rpc source refuses uncles: the head and the blocks it follows have none (as in history-era-source.test.ts).
  const withoutUncles = (block: HistoryBlock) => block.material.body.length === 3;
  const head = blocks.findLast((block, i) => blocks.slice(i - 3, i + 1).every(withoutUncles))!.number;
  const start = head - 3;
  const upstream = await serveMainnet(blocks, start, EXPIRED_BELOW);
  t.after(() => upstream.close());

  const toml = [
    '[[sources.history]]', 'id = "upstream"', 'kind = "rpc"', `url = ${JSON.stringify(upstream.url)}`, 'max_retries = 0',
    '[[sources.history]]', 'id = "era1"', 'kind = "era"', `path = ${JSON.stringify(ERA1_DIR)}`,
    '[history]', 'chunk_blocks = 64',
    '[[processors]]', 'id = "gas"', 'kind = "custom"', `module = ${JSON.stringify(EXAMPLE)}`, 'history_mode = "on_demand"', '',
  ].join('\n');
  const node = await startNodeProcess({
    toml, readyTimeoutMs: 120_000,
    sets: ['sources.live.kind=rpc', `sources.live.url=${upstream.url}`, 'sources.live.poll_interval_ms=200', 'finality.kind=rpc', 'finality.poll_interval_ms=200', 'runtime.shutdown_timeout_seconds=3', 'runtime.pool_threads=1'],
  });
  t.after(async () => { await node.stop(); removeDir(node.dir); });

  // On-demand JSON-RPC history below the upstream's expiry: the upstream refuses it, the Era1 file serves it.
  const old = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['0x2a', false] }) });
  const oldBlock = (await old.json()) as { result?: { hash: string }; error?: unknown };
  assert.equal(oldBlock.result?.hash, blocks[42]!.hash, JSON.stringify(oldBlock.error));

  upstream.setHead(head);
  await waitUntil(node, async () => ((await coverage(node, 'gas')).finalizedThrough ?? -1) >= head, 60_000);
  // The job names no source: each chunk from the upstream first, then from era1 where the upstream has expired it.
  const created = await createJob(node, { processor: 'gas', fromBlock: 0, toBlock: start, idempotencyKey: 'two-sources' });
  assert.equal(created.source, 'upstream');
  const done = await waitForJob(node, created.id, ['completed', 'failed'], 240_000);
  assert.equal(done.state, 'completed', JSON.stringify(done.lastError));
  assert.deepEqual(missingIn(await coverage(node, 'gas'), 0, head), []);
  const entities = async (from: number, to: number) => {
    const page = await (await fetch(`${node.baseUrl}/v1/processors/gas/collections/blocks/entities?fromBlock=${from}&toBlock=${to}&limit=10`)).json() as { data: Array<{ data: { blockNumber: number; blockHash: string } }> };
    return page.data.map((entity) => [entity.data.blockNumber, entity.data.blockHash]);
  };
  // Below the expiry (from the files) and above it (from the upstream), mainnet's blocks.
  for (const from of [1, EXPIRED_BELOW - 2, 6000]) assert.deepEqual(await entities(from, from + 3), [0, 1, 2, 3].map((i) => [from + i, blocks[from + i]!.hash]));
  // The upstream served none below its expiry and some above it: every range it could not serve — expired, or
  // holding a block with uncles, which its JSON answers cannot carry — was skipped, saying why, for the files.
  assert.deepEqual([...upstream.served].filter((n) => n > 0 && n < EXPIRED_BELOW), []);
  const servedAbove = [...upstream.served].filter((n) => n >= EXPIRED_BELOW && n < start);
  assert.ok(servedAbove.length > 0, 'the upstream served blocks above its expiry');
  const skips = node.output.filter((line) => line.includes('history source could not serve a range; asking the next one')).map((line) => JSON.parse(line) as { source: string; reason: string });
  assert.ok(skips.every((skip) => skip.source === 'upstream'), 'only the upstream was skipped');
  assert.ok(skips.some((skip) => /pruned history unavailable/.test(skip.reason)), 'skipped where it expired the blocks');
  assert.ok(skips.some((skip) => /uncles/.test(skip.reason)), 'skipped for blocks with uncles');
  t.diagnostic(`the upstream answered ${servedAbove.length} of blocks ${EXPIRED_BELOW}-${start - 1}; ${skips.length} ranges went to the Era1 files`);
});
