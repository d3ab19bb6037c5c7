import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';

test('a reorg deeper than chain.max_reorg_depth fails closed: readiness drops with the reason and nothing more is published', async (t) => {
  const node = await startNodeProcess({
    sets: ['devnet.block_time_ms=100', 'devnet.reorg_every=6', 'devnet.reorg_depth=3', 'devnet.finality_lag=5', 'chain.max_reorg_depth=2', 'finality.poll_interval_ms=100'],
  });
  t.after(async () => {
    await node.stop();
    removeDir(node.dir);
  });
  let body: { reasons: string[] } = { reasons: [] };
  await waitUntil(node, async () => {
    const response = await fetch(`${node.baseUrl}/health/ready`);
    body = await response.json() as typeof body;
    return response.status === 503;
  }, 30_000);
  assert.match(body.reasons.join('\n'), /lane 'chain' is degraded: failed closed: head \d+ .* would undo 3 blocks .*max_reorg_depth = 2/);
  const metrics = await (await fetch(`${node.baseUrl}/metrics`)).text();
  assert.match(metrics, /chain_node_lane_state\{lane="chain",state="degraded"\} 1/);
  assert.match(metrics, /chain_node_chain_failed_closed\{cause="reorg_too_deep",actor="chain"\} 1/, 'the alert metric (ops/alerts.yml) says why publication stopped');
  assert.match(metrics, /chain_node_chain_failed_closed\{cause="finalized_contradiction",actor="chain"\} 0/);
  const status = await (await fetch(`${node.baseUrl}/v1/processors/blobs/status`)).json() as { coverage: { state: string } };
  assert.equal(status.coverage.state, 'degraded', 'processor coverage reports the lane trouble');
  const head = async () => ((await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes/head`)).json()) as { sequence: string }).sequence;
  const frozen = await head();
  await new Promise((resolve) => setTimeout(resolve, 600));
  assert.equal(await head(), frozen, 'publication stopped');
});
