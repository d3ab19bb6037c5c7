import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/gas-stats/index.ts', import.meta.url));
const FAST = ['devnet.block_time_ms=150', 'actors.processor.restart_intensity=1', 'actors.processor.backoff_initial_ms=50', 'actors.processor.backoff_max_ms=100'];

/** A kind whose reduce throws at block 3: its lane must fail alone, with nothing of block 3 committed. */
const THROWING = `export default {
  name: 'throws_at_three', version: '1.0.0', sdk: '^1.0.0', ordering: 'ordered_state', needs: { bodies: false, receipts: false },
  changeSchema: 't.v1', finalizedKind: 't.finalized',
  map: (block) => block.number,
  reduce: (state, n, block) => {
    state.put(Buffer.from([1]), Buffer.from(String(n)));
    if (n === 3) throw new Error('kind bug at block three');
    return [{ kind: 't.put', key: '01', dataJson: String(n) }];
  },
  changeOf: (key, value) => ({ kind: 't.put', key: '01', dataJson: value ? value.toString() : 'null' }),
};
`;

/** A kind without a renderer: its changes carry raw bytes (the block number, 8 bytes big-endian), published as `{encoding: "hex", value}`. */
const RAW = `export default {
  name: 'raw_numbers', version: '1.0.0', sdk: '^1.0.0', ordering: 'block_local', needs: { bodies: false, receipts: false },
  changeSchema: 'raw.v1', finalizedKind: 'raw.finalized',
  apply: (ctx, block) => {
    const value = Buffer.alloc(8);
    value.writeBigUInt64BE(BigInt(block.number));
    return [{ kind: 'raw.put', key: value.toString('hex'), value }];
  },
  undo: (ctx, number) => [{ kind: 'raw.delete', key: null, value: Buffer.from([number & 0xff]) }],
  finalize: () => {},
};
`;

interface Lane { lane: string; state: string; failedReason: string | null; lastError: string | null }

test('custom kinds: the TypeScript example is served; a throwing kind and a missing module fail only their own lanes, saying which module and why, with no half-committed block', async (t) => {
  // The config names module files relative to itself, in the node's directory.
  const dir = mkdtempSync(join(tmpdir(), 'cdn-e2e-'));
  mkdirSync(join(dir, 'kinds'), { recursive: true });
  writeFileSync(join(dir, 'kinds', 'throws.mjs'), THROWING);
  writeFileSync(join(dir, 'kinds', 'raw.mjs'), RAW);
  const toml = [
    '[[processors]]', 'id = "blobs"', 'kind = "blobs"',
    '[[processors]]', 'id = "gas"', 'kind = "custom"', `module = ${JSON.stringify(EXAMPLE)}`, 'options = { congested_bps = 100 }',
    '[[processors]]', 'id = "bad"', 'kind = "custom"', 'module = "./kinds/throws.mjs"',
    '[[processors]]', 'id = "absent"', 'kind = "custom"', 'module = "./kinds/absent.ts"',
    '[[processors]]', 'id = "raw"', 'kind = "custom"', 'module = "./kinds/raw.mjs"', '',
  ].join('\n');
  const running = await startNodeProcess({ toml, sets: FAST, dir, readyTimeoutMs: 120_000 });
  t.after(async () => { await running.stop(); removeDir(dir); });
  const lanes = async () => ((await (await fetch(`${running.baseUrl}/health/ready`)).json()) as { lanes: Lane[] }).lanes;
  await waitUntil(running, async () => {
    const all = await lanes();
    return ['processor.bad', 'processor.absent'].every((name) => all.find((l) => l.lane === name)?.state === 'failed');
  }, 120_000);
  const all = await lanes();
  const bad = all.find((l) => l.lane === 'processor.bad')!;
  const absent = all.find((l) => l.lane === 'processor.absent')!;
  assert.match(`${bad.failedReason} ${bad.lastError}`, /kind bug at block three/);
  assert.match(`${absent.failedReason} ${absent.lastError}`, /absent\.ts/);
  assert.equal((await fetch(`${running.baseUrl}/health/ready`)).status, 200, 'optional processor lanes failing leave the node ready');

  // Nothing of block 3 is committed (the batch holding it rolled back whole): coverage and changes stop below it.
  const status = await (await fetch(`${running.baseUrl}/v1/processors/bad/status`)).json() as { coverage: { state: string; processedThrough: number | null; available: Array<{ toBlock: number }> } };
  assert.equal(status.coverage.state, 'failed');
  assert.ok(status.coverage.processedThrough === null || status.coverage.processedThrough <= 2, JSON.stringify(status.coverage));
  assert.ok(status.coverage.available.every((a) => a.toBlock <= 2));
  const changes = await (await fetch(`${running.baseUrl}/v1/processors/bad/changes?limit=100`)).json() as { data: Array<{ block: { number: number } | null }> };
  assert.ok(changes.data.every((c) => c.block!.number <= 2), 'no change of the failed block');

  // The others keep working: blobs follows the chain, the example kind serves its rows.
  await waitUntil(running, async () => {
    const gas = await (await fetch(`${running.baseUrl}/v1/processors/gas/status`)).json() as { processor: { kind: string }; coverage: { processedThrough: number | null } };
    return gas.processor.kind === 'gas_stats' && (gas.coverage.processedThrough ?? 0) >= 6;
  }, 60_000);
  const page = await (await fetch(`${running.baseUrl}/v1/processors/gas/collections/blocks/entities?fromBlock=1&toBlock=3`)).json() as { data: Array<{ data: { blockNumber: number; congested: boolean; utilizationBps: number; burnedWei: string } }> };
  assert.deepEqual(page.data.map((e) => e.data.blockNumber), [1, 2, 3]);
  for (const { data } of page.data) assert.equal(data.congested, data.utilizationBps >= 100);

  // A kind without a renderer publishes its raw bytes as {encoding: "hex", value}, labelled by its schema (spec §2.3).
  const raw = await (await fetch(`${running.baseUrl}/v1/processors/raw/changes?limit=5`)).json() as { data: Array<{ kind: string; schema: string; key: string; block: { number: number }; data: unknown }> };
  const put = raw.data.find((e) => e.kind === 'raw.put');
  assert.ok(put, JSON.stringify(raw));
  assert.equal(put.schema, 'raw.v1');
  assert.deepEqual(put.data, { encoding: 'hex', value: `0x${put.block.number.toString(16).padStart(16, '0')}` });
});
