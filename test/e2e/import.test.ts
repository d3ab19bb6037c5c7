import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES } from '../support/paths.js';
import { removeDir, runCli, startNodeProcess } from '../support/node-process.js';

const EXEC = join(FIXTURES, 'execution-apis');
const HEAD = '0xd226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7';

test('chain-node import loads chain.rlp into a data directory that a node with no live source then serves', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-e2e-import-'));
  try {
    const toml = [
      `data_dir = "${join(dir, 'data')}"`,
      'processors = []',
      '[sources.live]', 'kind = "none"', `genesis_file = "${join(EXEC, 'genesis.json')}"`,
      '[finality]', 'kind = "none"',
    ].join('\n');
    writeFileSync(join(dir, 'node.toml'), toml);

    const usage = await runCli(['import', '--config', join(dir, 'node.toml')]);
    assert.equal(usage.code, 2, 'the chain file is required');
    assert.match(usage.stderr, /import takes exactly one chain file/);

    const imported = await runCli(['import', join(EXEC, 'chain.rlp'), '--config', join(dir, 'node.toml')]);
    assert.equal(imported.code, 0, imported.stderr);
    const result = JSON.parse(imported.stdout) as { imported: number; head: { number: number; hash: string } };
    assert.equal(result.imported, 55);
    assert.deepEqual(result.head, { number: 54, hash: HEAD });
    assert.match(imported.stderr, /^import: 55\/55 blocks written, head 54 0xd226/m);

    const corrupt = join(dir, 'corrupt.rlp');
    writeFileSync(corrupt, Buffer.from([0xf9, 0x02, 0x00, 0x01]));
    const refused = await runCli(['import', corrupt, '--config', join(dir, 'node.toml')]);
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr, 'chain-node: import refused: chain file block #0 (at byte 0): truncated: the block needs 515 bytes, the file has 4 left\n');

    const node = await startNodeProcess({ dir, toml });
    try {
      const status = await (await fetch(`${node.baseUrl}/v1/status`)).json() as { chainId: number; head: { number: number; hash: string } };
      assert.equal(status.chainId, 3503995874084926);
      assert.deepEqual(status.head, { number: 54, hash: HEAD });
      const again = await runCli(['import', join(EXEC, 'chain.rlp'), '--config', join(dir, 'node.toml')]);
      assert.equal(again.code, 1, 'the running node holds the data-directory lock');
      assert.match(again.stderr, /is locked by pid \d+ \("node"\)/);
    } finally {
      assert.equal(await node.stop(), 0);
    }
  } finally {
    removeDir(dir);
  }
});
