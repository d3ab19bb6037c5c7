import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';

const FAST = ['devnet.block_time_ms=200', 'log.level=info'];

test('a data directory refuses a devnet configuration that generates another chain, and accepts its own again', async () => {
  const first = await startNodeProcess({ sets: FAST });
  try {
    await waitUntil(first, async () => {
      const status = await (await fetch(`${first.baseUrl}/v1/status`)).json() as { head?: { number?: number | string } | null };
      return Number(status.head?.number ?? 0) >= 2;
    }, 20_000);
    assert.equal(await first.stop(), 0);

    const changed = await startNodeProcess({ dir: first.dir, sets: [...FAST, 'devnet.transactions_per_block=3', 'devnet.seed=other'], waitReady: false });
    const code = await changed.exited;
    const output = changed.output.join('\n');
    assert.equal(code, 1, output);
    assert.match(output, /holds another chain than the configured one/);
    assert.match(output, /transactionsPerBlock was 12, is now 3/);
    assert.match(output, /seed was chain-data-node, is now other/);
    assert.doesNotMatch(output, /devnet block production failed|fail(ed|s) closed/);

    const again = await startNodeProcess({ dir: first.dir, sets: FAST });
    assert.equal(await again.stop(), 0, again.output.join('\n'));
  } finally {
    removeDir(first.dir);
  }
});
