import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crc32 } from '../../../net/eth/crc32.js';
import { checkForkId, forkId, forkIdActivations } from '../../../net/eth/fork-id.js';
import { forkAt, isForkActive, MAINNET_GENESIS_HASH, MAINNET_GENESIS_TIMESTAMP, MAINNET_SCHEDULE } from '../../../net/eth/fork-schedule.js';
import { buildGenesisBlock } from '../../../net/eth/genesis-state.js';
import { parseGethGenesis } from '../../../net/eth/genesis.js';
import type { Hex } from '../../../net/eth/hex.js';
import { readJson } from './fixtures.js';

interface ForkIdVectors {
  genesisHash: Hex;
  cases: { head: number; time: number; hash: Hex; next: number }[];
}

const vectors = readJson('vectors/forkid-mainnet.json') as ForkIdVectors;
const MAINNET = { hash: MAINNET_GENESIS_HASH, timestamp: MAINNET_GENESIS_TIMESTAMP };

describe('EIP-2124 fork ids', () => {
  it('crc32 is the IEEE checksum', () => {
    assert.equal(crc32(new TextEncoder().encode('123456789')), 0xcbf43926);
    assert.equal(crc32(new TextEncoder().encode('6789'), crc32(new TextEncoder().encode('12345'))), 0xcbf43926);
  });

  it('the vector file names the mainnet genesis hash', () => {
    assert.equal(vectors.genesisHash, MAINNET_GENESIS_HASH);
  });

  it(`mainnet fork ids match all ${vectors.cases.length} vectors of forkid-mainnet.json`, () => {
    assert.ok(vectors.cases.length >= 21);
    for (const v of vectors.cases) {
      assert.deepEqual(forkId(MAINNET_SCHEDULE, MAINNET, { number: v.head, timestamp: v.time }), { hash: v.hash, next: v.next }, JSON.stringify(v));
    }
  });

  it('the merge (by total difficulty) is no fork id entry; duplicate blocks count once', () => {
    const { blocks, timestamps } = forkIdActivations(MAINNET_SCHEDULE, 0);
    assert.ok(!blocks.includes(15_537_394));
    assert.equal(blocks.filter((b) => b === 7_280_000).length, 1);
    assert.deepEqual(timestamps, [1681338455, 1710338135, 1746612311, 1764798551, 1765290071, 1767747671]);
  });

  it("the execution-apis chain's fork id equals the one its client reported in eth_config (0xe272ecbe after BPO2)", async () => {
    const genesis = parseGethGenesis(readJson('execution-apis/genesis.json'));
    const { header, hash } = buildGenesisBlock(genesis);
    const id = forkId(genesis.schedule, { hash, timestamp: header.timestamp }, { number: 54, timestamp: 540 });
    assert.deepEqual(id, { hash: '0xe272ecbe', next: 0 });
    const beforeBpo2 = forkId(genesis.schedule, { hash, timestamp: header.timestamp }, { number: 50, timestamp: 539 });
    assert.equal(beforeBpo2.next, 540);
  });

  it('forkAt names the fork of a mainnet block by number before the merge and by timestamp after', () => {
    assert.equal(forkAt(MAINNET_SCHEDULE, { number: 0, timestamp: 0 }), 'frontier');
    assert.equal(forkAt(MAINNET_SCHEDULE, { number: 12_964_999, timestamp: 1_628_166_812 }), 'berlin');
    assert.equal(forkAt(MAINNET_SCHEDULE, { number: 12_965_000, timestamp: 1_628_166_822 }), 'london');
    assert.equal(forkAt(MAINNET_SCHEDULE, { number: 15_537_393, timestamp: 1_663_224_162 }), 'grayGlacier');
    assert.equal(forkAt(MAINNET_SCHEDULE, { number: 15_537_394, timestamp: 1_663_224_179 }), 'paris');
    assert.equal(forkAt(MAINNET_SCHEDULE, { number: 19_426_586, timestamp: 1_710_338_123 }), 'shanghai');
    assert.equal(forkAt(MAINNET_SCHEDULE, { number: 19_426_587, timestamp: 1_710_338_135 }), 'cancun');
    assert.equal(forkAt(MAINNET_SCHEDULE, { number: 22_431_084, timestamp: 1_746_612_311 }), 'prague');
    assert.equal(forkAt(MAINNET_SCHEDULE, { number: 24_000_000, timestamp: 1_767_747_671 }), 'bpo2');
    assert.ok(isForkActive(MAINNET_SCHEDULE, 'osaka', { number: 24_000_000, timestamp: 1_764_798_551 }));
    assert.ok(!isForkActive(MAINNET_SCHEDULE, 'osaka', { number: 24_000_000, timestamp: 1_764_798_550 }));
  });
});

describe('EIP-2124 fork id validation (mainnet)', () => {
  const petersburg = { number: 7_987_396, timestamp: 1_561_000_000 };
  const byzantium = { number: 7_279_999, timestamp: 1_551_000_000 };
  const cancun = { number: 19_500_000, timestamp: 1_711_000_000 };
  const check = (head: { number: number; timestamp: number }, hash: Hex, next: number) => checkForkId(MAINNET_SCHEDULE, MAINNET, head, { hash, next });

  it('accepts a peer on the same fork, with or without an announced future fork', () => {
    assert.deepEqual(check(petersburg, '0x668db0af', 0), { ok: true });
    assert.deepEqual(check(petersburg, '0x668db0af', 0xffffffff), { ok: true });
  });

  it('accepts a peer behind us that announces the fork we passed next', () => {
    assert.deepEqual(check(petersburg, '0xa00bc324', 7_280_000), { ok: true });
    assert.deepEqual(check(cancun, '0xdce96c2d', 1_710_338_135), { ok: true });
  });

  it('rejects a peer behind us that does not know the fork we passed (remote stale)', () => {
    assert.deepEqual(check(petersburg, '0xa00bc324', 0), { ok: false, reason: 'remote_stale' });
    assert.deepEqual(check(cancun, '0xdce96c2d', 0), { ok: false, reason: 'remote_stale' });
  });

  it('accepts a peer ahead of us on our fork line (we are syncing)', () => {
    assert.deepEqual(check(byzantium, '0x668db0af', 0), { ok: true });
    assert.deepEqual(check(cancun, '0x07c9462e', 0), { ok: true });
  });

  it('rejects a peer whose announced next fork we already passed without forking', () => {
    assert.deepEqual(check(petersburg, '0x668db0af', 7_987_396), { ok: false, reason: 'local_incompatible_or_stale' });
    assert.deepEqual(check(byzantium, '0xa00bc324', 7_279_999), { ok: false, reason: 'local_incompatible_or_stale' });
    assert.deepEqual(check(cancun, '0x9f3d2254', 1_710_500_000), { ok: false, reason: 'local_incompatible_or_stale' });
  });

  it('rejects an unknown checksum', () => {
    assert.deepEqual(check(petersburg, '0xafec6b27', 0), { ok: false, reason: 'local_incompatible_or_stale' });
  });
});
