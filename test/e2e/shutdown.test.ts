/**
 * Graceful shutdown while blocks keep coming: the listeners stop first (STOP_ORDER), so the chain
 * lane may still commit a move and notify followers that are already gone. That must not crash a
 * lane or put an error in the log; the node exits 0.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';

const FAST = ['devnet.block_time_ms=20', 'devnet.transactions_per_block=2', 'devnet.reorg_every=0'];

async function headSequence(baseUrl: string): Promise<number> {
  const response = await fetch(`${baseUrl}/v1/processors/blobs/changes/head`);
  return Number(((await response.json()) as { sequence: string }).sequence);
}

test('SIGTERM while the devnet commits every 20 ms: exit code 0 and no error in the log', async () => {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const node = await startNodeProcess({ sets: FAST });
    try {
      await waitUntil(node, async () => (await headSequence(node.baseUrl)) > 20, 30_000);
    } finally {
      assert.equal(await node.stop('SIGTERM'), 0, 'SIGTERM stops the node with exit code 0');
      removeDir(node.dir);
    }
    const errors = node.output.filter((line) => line.startsWith('{') && (JSON.parse(line) as { level: string }).level === 'error');
    assert.deepEqual(errors, [], `attempt ${attempt + 1}: the shutdown logged errors`);
  }
});
