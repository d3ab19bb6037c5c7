import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blobParamsAt, forkAt, MAINNET_SCHEDULE } from '../../../net/eth/fork-schedule.js';
import { ethConfigMismatches, parseEthConfig, scheduleFromEthConfig } from '../../../net/rpc/eth-config.js';
import { parseGethGenesis } from '../../../net/eth/genesis.js';

const PRAGUE_PRECOMPILES = ['ECREC', 'SHA256', 'RIPEMD160', 'ID', 'MODEXP', 'BN254_ADD', 'BN254_MUL', 'BN254_PAIRING', 'BLAKE2F', 'KZG_POINT_EVALUATION', 'BLS12_G1ADD', 'BLS12_G1MSM', 'BLS12_G2ADD', 'BLS12_G2MSM', 'BLS12_PAIRING_CHECK', 'BLS12_MAP_FP_TO_G1', 'BLS12_MAP_FP2_TO_G2'];
const precompiles = (names: string[]) => Object.fromEntries(names.map((name, i) => [name, `0x${(i + 1).toString(16).padStart(40, '0')}`]));
const fork = (activationTime: number, names: string[], blob: { target: number; max: number; baseFeeUpdateFraction: number }, forkId = '0x00000000') => ({
  activationTime, blobSchedule: blob, chainId: '0x7a69', forkId, precompiles: precompiles(names), systemContracts: {},
});
/** What anvil 1.7.1 --hardfork prague answers (precompile addresses shortened; fork id 0x00000000, as anvil reports it). */
const ANVIL = { current: fork(0, PRAGUE_PRECOMPILES, { target: 6, max: 9, baseFeeUpdateFraction: 5007716 }), next: null, last: null };
const GENESIS = { hash: `0x${'11'.repeat(32)}` as const, timestamp: 1_700_000_000 };

test('an anvil-shaped eth_config determines the schedule: Prague (and everything before it) since genesis', () => {
  const result = scheduleFromEthConfig(parseEthConfig(ANVIL), GENESIS);
  assert.ok(result.ok, result.ok ? '' : result.reason);
  const schedule = result.schedule;
  assert.equal(schedule.chainId, 31337n);
  const at = { number: 5, timestamp: GENESIS.timestamp + 10 };
  assert.equal(forkAt(schedule, at), 'prague');
  assert.deepEqual(blobParamsAt(schedule, at), { target: 6, max: 9, baseFeeUpdateFraction: 5_007_716n, eip7918: false });
});

test('next and last entries become Osaka and BPO forks at their times, checked against the fork ids the upstream reports', () => {
  const osakaNames = [...PRAGUE_PRECOMPILES, 'P256VERIFY'];
  const draft = {
    current: fork(0, PRAGUE_PRECOMPILES, { target: 6, max: 9, baseFeeUpdateFraction: 5007716 }),
    next: fork(GENESIS.timestamp + 100, osakaNames, { target: 6, max: 9, baseFeeUpdateFraction: 5007716 }),
    last: fork(GENESIS.timestamp + 200, osakaNames, { target: 10, max: 15, baseFeeUpdateFraction: 8346193 }),
  };
  const unchecked = scheduleFromEthConfig(parseEthConfig(draft), GENESIS);
  assert.ok(unchecked.ok);
  assert.equal(forkAt(unchecked.schedule, { number: 1, timestamp: GENESIS.timestamp + 150 }), 'osaka');
  assert.equal(forkAt(unchecked.schedule, { number: 1, timestamp: GENESIS.timestamp + 250 }), 'bpo1');
  assert.deepEqual(blobParamsAt(unchecked.schedule, { number: 1, timestamp: GENESIS.timestamp + 250 }), { target: 10, max: 15, baseFeeUpdateFraction: 8_346_193n, eip7918: true });
  // A wrong fork id in the answer is caught.
  const wrong = scheduleFromEthConfig(parseEthConfig({ ...draft, next: { ...draft.next, forkId: '0xdeadbeef' } }), GENESIS);
  assert.equal(wrong.ok, false);
  assert.match(wrong.ok ? '' : wrong.reason, /fork id .*0xdeadbeef/);
});

test('an answer whose current fork started after genesis does not stand alone; a malformed one is refused', () => {
  const late = scheduleFromEthConfig(parseEthConfig({ ...ANVIL, current: { ...ANVIL.current, activationTime: GENESIS.timestamp + 5 } }), GENESIS);
  assert.equal(late.ok, false);
  assert.match(late.ok ? '' : late.reason, /after genesis/);
  assert.throws(() => parseEthConfig({ current: { ...ANVIL.current, forkId: 'zz' } }), /forkId/);
  assert.throws(() => parseEthConfig(null), /not an object/);
});

test('eth_config cross-checked with a genesis file: agreement, and each disagreement named', () => {
  const config = parseEthConfig(ANVIL);
  const genesis = (blobSchedule: Record<string, unknown>, extra: Record<string, unknown> = {}) => parseGethGenesis({
    config: {
      chainId: 31337, homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0, constantinopleBlock: 0, petersburgBlock: 0,
      istanbulBlock: 0, berlinBlock: 0, londonBlock: 0, mergeNetsplitBlock: 0, terminalTotalDifficulty: 0, shanghaiTime: 0, cancunTime: 0, pragueTime: 0, blobSchedule, ...extra,
    },
    nonce: '0x0', timestamp: '0x0', extraData: '0x', gasLimit: '0x1c9c380', difficulty: '0x0', alloc: {},
  });
  const agreeing = genesis({ cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3338477 }, prague: { target: 6, max: 9, baseFeeUpdateFraction: 5007716 } });
  assert.deepEqual(ethConfigMismatches(config, agreeing.schedule), []);
  const otherBlobs = genesis({ cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3338477 }, prague: { target: 9, max: 12, baseFeeUpdateFraction: 5007716 } });
  assert.match(ethConfigMismatches(config, otherBlobs.schedule).join('\n'), /prague blob schedule: eth_config current says target 6, max 9.*genesis file says target 9, max 12/);
  assert.match(ethConfigMismatches(config, MAINNET_SCHEDULE).join('\n'), /chain id 31337 vs 1/);
});
