import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MAINNET_GENESIS_HASH, MAINNET_GENESIS_TIMESTAMP, MAINNET_SCHEDULE } from '../../../../net/eth/index.js';
import { scheduleActivationsAt, scheduleRows } from '../../../../actors/kinds/blobs/schedule.js';
import { FIXTURES } from '../../../support/paths.js';
import { mainnetFixtureBlocks } from './support.js';

const MAINNET_GENESIS = { hash: MAINNET_GENESIS_HASH, timestamp: MAINNET_GENESIS_TIMESTAMP };

interface ForkIdCase {
  head: number;
  time: number;
  hash: string;
}
const forkIdCases = (JSON.parse(readFileSync(join(FIXTURES, 'vectors/forkid-mainnet.json'), 'utf8')) as { cases: ForkIdCase[] }).cases;

describe('blob schedule rows', () => {
  const rows = scheduleRows(MAINNET_SCHEDULE, MAINNET_GENESIS, 'chain_spec');
  const byName = new Map(rows.map((row) => [row.name, row]));

  it('mainnet lists every blob fork in activation order', () => {
    assert.deepEqual(rows.map((row) => row.name), ['cancun', 'prague', 'osaka', 'bpo1', 'bpo2']);
    assert.ok(rows.every((row) => row.source === 'chain_spec'));
  });

  it('Cancun 3/6/3338477 and Prague 6/9/5007716, without EIP-7918', () => {
    assert.deepEqual(byName.get('cancun'), {
      name: 'cancun', activationBlock: null, activationTimestamp: 1_710_338_135, forkId: '0x9f3d2254',
      targetBlobsPerBlock: 3, maxBlobsPerBlock: 6, baseFeeUpdateFraction: '3338477', eip7918: false, source: 'chain_spec',
    });
    const prague = byName.get('prague')!;
    assert.deepEqual([prague.targetBlobsPerBlock, prague.maxBlobsPerBlock, prague.baseFeeUpdateFraction, prague.eip7918], [6, 9, '5007716', false]);
  });

  it('Osaka and the BPO forks carry EIP-7918 and the parameters of the net/eth schedule', () => {
    const expected = { osaka: [6, 9, '5007716'], bpo1: [10, 15, '8346193'], bpo2: [14, 21, '11684671'] };
    for (const [name, params] of Object.entries(expected)) {
      const row = byName.get(name)!;
      assert.deepEqual([row.targetBlobsPerBlock, row.maxBlobsPerBlock, row.baseFeeUpdateFraction], params, name);
      assert.equal(row.eip7918, true, name);
      const fork = MAINNET_SCHEDULE.forks.find((f) => f.name === name)!;
      assert.equal(row.activationTimestamp, fork.timestamp);
      assert.equal(row.baseFeeUpdateFraction, fork.blob!.baseFeeUpdateFraction.toString());
    }
  });

  it('fork ids match the EIP-2124 mainnet vectors at each activation timestamp', () => {
    let matched = 0;
    for (const row of rows) {
      const vector = forkIdCases.find((c) => c.time === row.activationTimestamp);
      if (vector === undefined) continue;
      assert.equal(row.forkId, vector.hash, row.name);
      matched += 1;
    }
    assert.equal(matched, rows.length);
  });

  it('activationBlock is null when unknown and the resolver answer when given', () => {
    const known = new Map([[1_710_338_135, 19_426_587], [1_746_612_311, 22_431_084]]);
    const resolved = scheduleRows(MAINNET_SCHEDULE, MAINNET_GENESIS, 'eth_config', (timestamp) => known.get(timestamp) ?? null);
    assert.deepEqual(resolved.map((row) => row.activationBlock), [19_426_587, 22_431_084, null, null, null]);
    assert.ok(resolved.every((row) => row.source === 'eth_config'));
    assert.ok(rows.every((row) => row.activationBlock === null));
  });

  it('the fixtures confirm the first Cancun and first Prague blocks through scheduleActivationsAt', () => {
    const fixtures = new Map(mainnetFixtureBlocks().map((f) => [f.number, f.header]));
    for (const [parent, child, name] of [[19_426_586, 19_426_587, 'cancun'], [22_431_083, 22_431_084, 'prague']] as const) {
      const activations = scheduleActivationsAt(rows, fixtures.get(child)!, fixtures.get(parent)!.timestamp);
      assert.deepEqual(activations.map((row) => [row.name, row.activationBlock]), [[name, child]]);
      assert.deepEqual(activations[0], { ...byName.get(name)!, activationBlock: child });
    }
    const inside = fixtures.get(22_869_878)!;
    assert.deepEqual(scheduleActivationsAt(rows, inside, inside.timestamp - 12), []);
  });
});
