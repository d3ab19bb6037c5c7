import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { leftoverCount } from '../../bench/leftovers.js';
import { setBenchNodeBase, startBenchNode } from '../../bench/node.js';

const dir = mkdtempSync(join(tmpdir(), 'cdn-bench-config-'));
after(() => {
  setBenchNodeBase({ configFile: null, sets: [] });
  rmSync(dir, { recursive: true, force: true });
});

describe('bench node configuration', () => {
  it('a bench node takes the base config file, then the workload overrides, then the run overrides; the harness keeps its own ports and data directory', async () => {
    const configFile = join(dir, 'base.toml');
    writeFileSync(configFile, [
      'data_dir = "/nonexistent/never-used"',
      '[listeners]', 'api = "127.0.0.1:1"',
      '[devnet]', 'chain_id = 4242', 'block_time_ms = 100',
      '[[processors]]', 'id = "alpha"', 'kind = "blobs"',
    ].join('\n'));
    setBenchNodeBase({ configFile, sets: ['devnet.chain_id=4343'] });
    const node = await startBenchNode(['devnet.chain_id=1', 'devnet.reorg_every=0']);
    try {
      const capabilities = await (await fetch(`${node.baseUrl}/v1/capabilities`)).json() as { chainId: number; processors: Array<{ id: string }> };
      assert.equal(capabilities.chainId, 4343, 'the run override wins over the workload override and the file');
      assert.deepEqual(capabilities.processors.map((p) => p.id), ['alpha'], 'the processors come from the base file');
      assert.ok(node.dataDir.startsWith(tmpdir()), node.dataDir);
      assert.deepEqual(leftoverCount(), { processes: 1, directories: 1 });
    } finally {
      await node.stop();
    }
    assert.deepEqual(leftoverCount(), { processes: 0, directories: 0 }, 'stop ends the node and removes its directory');
  });
});
