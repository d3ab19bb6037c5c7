import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CustomKindError, loadKindModule } from '../../../actors/kinds/custom-kind.js';
import { renderChanges } from '../../../actors/kinds/sdk/define.js';
import { transformBlock } from '../../../actors/kinds/blobs/index.js';
import type { BlockInput, KindContext } from '../../../actors/kinds/sdk/kind.js';
import { closeTempStore, createTempStore } from '../../api/aggregate/store-fixture.js';
import { mainnetFixtureBlocks } from './blobs/support.js';
import { blobParamsAt, MAINNET_SCHEDULE } from '../../../net/eth/index.js';

const EXAMPLE = fileURLToPath(new URL('../../../../examples/gas-stats/index.ts', import.meta.url));

function scratch(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-kind-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('the example kind loads from TypeScript, compiled at load, and its burned fees match the blobs kind\'s over the mainnet fixture blocks', async (t) => {
  const cache = scratch(t);
  const kind = await loadKindModule(EXAMPLE, cache);
  assert.deepEqual([kind.name, kind.version, kind.ordering, kind.collections.map((c) => c.name)], ['gas_stats', '1.0.0', 'block_local', ['blocks']]);
  const temp = createTempStore('cdn-kind-');
  t.after(() => closeTempStore(temp));
  const tables = temp.store.processor('gas@test');
  const ctx: KindContext = { tables, network: 'mainnet', schedule: MAINNET_SCHEDULE, genesis: { hash: `0x${'00'.repeat(32)}`, timestamp: 0 } };
  const bound = kind.bind({ congested_bps: 5000 });
  for (const block of mainnetFixtureBlocks()) {
    const input: BlockInput = { number: block.number, hash: block.hash, header: block.header, transactions: block.body.transactions, receipts: block.receipts, sizeBytes: block.sizeBytes, parentTimestamp: null };
    const [change] = await temp.store.write(() => bound.apply(ctx, input, 'included'));
    const row = JSON.parse(change!.dataJson) as { burnedWei: string; priorityFeesWei: string; transactionCount: number; congested: boolean; utilizationBps: number };
    assert.equal(row.burnedWei, (block.header.baseFeePerGas! * block.header.gasUsed).toString(), `block ${block.number}`);
    if (blobParamsAt(MAINNET_SCHEDULE, block.header) !== undefined) {
      // Cancun and later: the blobs kind computes the same burn its own way.
      const blobs = transformBlock({ network: 'mainnet', schedule: ctx.schedule, header: block.header, transactions: block.body.transactions, receipts: block.receipts, blockSizeBytes: block.sizeBytes, finality: 'included', blockHash: block.hash });
      assert.equal(row.burnedWei, blobs.block.executionEthBurnedWei, `block ${block.number}`);
    }
    assert.equal(row.transactionCount, block.body.transactions.length);
    assert.equal(row.congested, row.utilizationBps >= 5000);
    assert.ok(BigInt(row.priorityFeesWei) > 0n, 'mainnet senders tip validators');
  }
  const rows = [...kind.collections[0]!.scan(tables.entities, { fromBlock: null, toBlock: null, after: null, finalizedNumber: null })];
  assert.equal(rows.length, mainnetFixtureBlocks().length);
  assert.throws(() => kind.bind({ congested_bps: 'high' }), /congested_bps/);
});

test('a kind written for another SDK range, a module that throws at import, a syntax error and a missing export are refused naming the module', async (t) => {
  const dir = scratch(t);
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const definition = (sdk: string) => `export default { name: 'k', version: '1.0.0', sdk: '${sdk}', ordering: 'ordered_state', needs: { bodies: false, receipts: true }, changeSchema: 'k.v1', finalizedKind: 'k.f', map: () => [], reduce: () => [], changeOf: () => ({ kind: 'k', key: null, dataJson: 'null' }) };`;
  await assert.rejects(loadKindModule(write('future.mjs', definition('^2.0.0')), dir), (error: Error) => error instanceof CustomKindError && /future\.mjs.*SDK \^2\.0\.0.*1\.0\.0/.test(error.message));
  const ok = await loadKindModule(write('ok.mjs', definition('>=1.0.0 <2.0.0')), dir);
  assert.equal(ok.ordering, 'ordered_state');
  await assert.rejects(loadKindModule(write('throws.mjs', 'throw new Error("boom at import");'), dir), /throws\.mjs failed to load: boom at import/);
  await assert.rejects(loadKindModule(write('broken.ts', 'export default {;'), dir), /broken\.ts does not compile/);
  await assert.rejects(loadKindModule(write('empty.mjs', 'export const x = 1;'), dir), /empty\.mjs has no default export/);
  await assert.rejects(loadKindModule(write('shape.mjs', definition('^1.0.0').replace("map: () => [], ", '')), dir), /needs a 'map' function/);
  await assert.rejects(loadKindModule(join(dir, 'absent.ts'), dir), /absent\.ts cannot be read/);
});

test('a change given as raw bytes publishes through the kind\'s render, or as {encoding: "hex", value} without one (spec §2.3)', () => {
  const raw = { kind: 'k.put', key: '01', value: Uint8Array.of(0xde, 0xad) };
  const rendered = { kind: 'k.put', key: '02', dataJson: '{"typed":true}' };
  assert.deepEqual(renderChanges([raw, rendered], undefined).map((c) => JSON.parse(c.dataJson)), [{ encoding: 'hex', value: '0xdead' }, { typed: true }]);
  assert.deepEqual(renderChanges([raw], (change) => ({ length: change.value.length })).map((c) => [c.kind, c.key, JSON.parse(c.dataJson)]), [['k.put', '01', { length: 2 }]]);
  const unchanged = [rendered];
  assert.equal(renderChanges(unchanged, undefined), unchanged, 'rendered changes pass through untouched');
});
