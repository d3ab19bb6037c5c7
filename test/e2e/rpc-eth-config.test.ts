import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ANVIL_CHAIN_ID, startAnvil } from '../support/anvil.js';
import { removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';

const UPSTREAM = ['sources.live.kind=rpc', 'sources.live.poll_interval_ms=100', 'sources.live.pooled_blob_roots=true', 'finality.kind=rpc', 'finality.poll_interval_ms=200'];

test('following anvil without a genesis file: the fork and blob schedule come from its eth_config', async (t) => {
  const anvil = await startAnvil();
  t.after(() => anvil.stop());
  const node = await startNodeProcess({ sets: [...UPSTREAM, `sources.live.url=${anvil.url}`] });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  await anvil.mine(2);
  await waitUntil(node, async () => (await fetch(`${node.baseUrl}/v1/q/blobs/blocks/2`)).status === 200, 20_000);
  const schedule = await (await fetch(`${node.baseUrl}/v1/q/blobs/schedule`)).json() as { data: Array<{ name: string; targetBlobsPerBlock: number; maxBlobsPerBlock: number; source: string }> };
  assert.ok(schedule.data.length > 0 && schedule.data.every((s) => s.source === 'eth_config'), JSON.stringify(schedule.data));
  assert.deepEqual(schedule.data.filter((s) => s.name === 'prague').map((s) => [s.targetBlobsPerBlock, s.maxBlobsPerBlock]), [[6, 9]]);
  const row = await (await fetch(`${node.baseUrl}/v1/q/blobs/blocks/2`)).json() as { targetBlobsPerBlock: number; maxBlobsPerBlock: number };
  assert.deepEqual([row.targetBlobsPerBlock, row.maxBlobsPerBlock], [6, 9], 'blocks use the Prague blob parameters anvil announced');
  const status = await (await fetch(`${node.baseUrl}/v1/status`)).json() as { chainId: number };
  assert.equal(status.chainId, ANVIL_CHAIN_ID);
});

test('a genesis file that disagrees with the upstream eth_config stops start-up, naming both', async (t) => {
  const anvil = await startAnvil();
  t.after(() => anvil.stop());
  const dir = mkdtempSync(join(tmpdir(), 'cdn-eth-config-'));
  t.after(() => removeDir(dir));
  writeFileSync(join(dir, 'genesis.json'), JSON.stringify({
    config: {
      chainId: ANVIL_CHAIN_ID, homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0, constantinopleBlock: 0, petersburgBlock: 0,
      istanbulBlock: 0, berlinBlock: 0, londonBlock: 0, mergeNetsplitBlock: 0, terminalTotalDifficulty: 0, shanghaiTime: 0, cancunTime: 0,
      blobSchedule: { cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3338477 } },
    },
    nonce: '0x0', timestamp: '0x0', extraData: '0x', gasLimit: '0x1c9c380', difficulty: '0x0', alloc: {},
  }));
  const node = await startNodeProcess({ dir, waitReady: false, sets: [...UPSTREAM, `sources.live.url=${anvil.url}`, 'sources.live.genesis_file=genesis.json'] });
  assert.equal(await node.exited, 1);
  const output = node.output.join('\n');
  assert.match(output, /sources\.live\.genesis_file/);
  assert.match(output, /eth_config/);
  assert.match(output, /genesis file schedules cancun|says target 6, max 9/);
});
