import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const FAST = ['devnet.block_time_ms=20', 'devnet.reorg_every=25'];

async function rpc(node: NodeProcess, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await response.json()) as { result: unknown }).result;
}

const blockNumber = async (node: NodeProcess) => Number(await rpc(node, 'eth_blockNumber'));
const hashAt = async (node: NodeProcess, n: number) => ((await rpc(node, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])) as { hash: string }).hash;

test('a restarted devnet continues from its stored blocks instead of regenerating the chain from genesis, on the same chain', async (t) => {
  const node = await startNodeProcess({ sets: FAST });
  t.after(() => removeDir(node.dir));
  await waitUntil(node, async () => (await blockNumber(node)) >= 150, 120_000);
  assert.equal(await node.stop('SIGTERM'), 0);

  const restarted = await startNodeProcess({ dir: node.dir, sets: FAST });
  t.after(() => restarted.stop('SIGKILL'));
  // The line is written before readiness, but this process may read the pipe after the readiness answer.
  await waitUntil(restarted, async () => restarted.output.some((line) => line.includes('continuing the devnet from its stored blocks')), 60_000);
  const log = restarted.output.join('\n');
  assert.match(log, /continuing the devnet from its stored blocks/);
  assert.doesNotMatch(log, /replaying the devnet/);
  const stoppedAt = await blockNumber(restarted);
  assert.ok(stoppedAt >= 150);
  // The chain goes on from where it was, past a reorg, and the blocks below the old head are unchanged.
  const finalizedHash = await hashAt(restarted, stoppedAt - 20);
  await waitUntil(restarted, async () => (await blockNumber(restarted)) >= stoppedAt + 40, 120_000);
  assert.equal(await hashAt(restarted, stoppedAt - 20), finalizedHash);
  assert.equal((await fetch(`${restarted.baseUrl}/health/ready`)).status, 200);
  assert.equal(await restarted.stop('SIGTERM'), 0);
});
