import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseGethGenesis } from '../../../net/eth/genesis.js';
import type { ForkName } from '../../../net/eth/fork-schedule.js';
import { FIXTURES } from '../../support/paths.js';

/** hive's forkenv.json names → the schedule's fork names. */
const BLOCK_FORKS: Record<string, ForkName> = {
  HOMESTEAD: 'homestead', TANGERINE: 'tangerineWhistle', SPURIOUS: 'spuriousDragon', BYZANTIUM: 'byzantium',
  CONSTANTINOPLE: 'constantinople', PETERSBURG: 'petersburg', ISTANBUL: 'istanbul', MUIR_GLACIER: 'muirGlacier',
  BERLIN: 'berlin', LONDON: 'london', ARROW_GLACIER: 'arrowGlacier', GRAY_GLACIER: 'grayGlacier',
};
const TIME_FORKS: Record<string, ForkName> = { SHANGHAI: 'shanghai', CANCUN: 'cancun', PRAGUE: 'prague', OSAKA: 'osaka', BPO1: 'bpo1', BPO2: 'bpo2' };

for (const folder of ['execution-apis', 'hive-eth-chain']) {
  test(`${folder}: genesis.json alone gives the chain id, fork schedule and blob schedule its forkenv.json states, so the import needs no forkenv`, () => {
    const genesis = parseGethGenesis(JSON.parse(readFileSync(join(FIXTURES, folder, 'genesis.json'), 'utf8')));
    const env = JSON.parse(readFileSync(join(FIXTURES, folder, 'forkenv.json'), 'utf8')) as Record<string, string>;
    assert.equal(genesis.chainId, BigInt(env.HIVE_CHAIN_ID!));
    const fork = (name: ForkName) => genesis.schedule.forks.find((f) => f.name === name);
    let checked = 0;
    for (const [key, name] of Object.entries(BLOCK_FORKS)) {
      const value = env[`HIVE_FORK_${key}`];
      if (value === undefined) continue;
      assert.equal(fork(name)?.block, Number(value), `${key} block`);
      checked += 1;
    }
    assert.equal(fork('paris')?.block, Number(env.HIVE_MERGE_BLOCK_ID), 'merge block');
    for (const [key, name] of Object.entries(TIME_FORKS)) {
      const value = env[`HIVE_${key}_TIMESTAMP`];
      if (value === undefined) {
        assert.equal(fork(name), undefined, `${key} is not scheduled`);
        continue;
      }
      assert.equal(fork(name)?.timestamp, Number(value), `${key} timestamp`);
      if (env[`HIVE_${key}_BLOB_MAX`] !== undefined) {
        assert.deepEqual(fork(name)?.blob, {
          target: Number(env[`HIVE_${key}_BLOB_TARGET`]),
          max: Number(env[`HIVE_${key}_BLOB_MAX`]),
          baseFeeUpdateFraction: BigInt(env[`HIVE_${key}_BLOB_BASE_FEE_UPDATE_FRACTION`]!),
        }, `${key} blob parameters`);
      }
      checked += 1;
    }
    assert.ok(checked >= 14, `${checked} forks compared`);
  });
}
