import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EMPTY_UNCLES_HASH } from '../../../net/eth/block.js';
import { GenesisFormatError } from '../../../net/eth/errors.js';
import { blobParamsAt, forkAt, type ForkName } from '../../../net/eth/fork-schedule.js';
import { buildGenesisBlock, genesisStateRoot } from '../../../net/eth/genesis-state.js';
import { EMPTY_REQUESTS_HASH, parseGethGenesis } from '../../../net/eth/genesis.js';
import { EMPTY_TRIE_ROOT } from '../../../net/eth/trie-root.js';
import { readJson } from './fixtures.js';

/** forkenv.json key → fork name, for the HIVE_FORK_* blocks and HIVE_*_TIMESTAMP times. */
const FORKENV_BLOCKS: Record<string, ForkName> = {
  HIVE_FORK_HOMESTEAD: 'homestead', HIVE_FORK_TANGERINE: 'tangerineWhistle', HIVE_FORK_SPURIOUS: 'spuriousDragon',
  HIVE_FORK_BYZANTIUM: 'byzantium', HIVE_FORK_CONSTANTINOPLE: 'constantinople', HIVE_FORK_PETERSBURG: 'petersburg',
  HIVE_FORK_ISTANBUL: 'istanbul', HIVE_FORK_MUIR_GLACIER: 'muirGlacier', HIVE_FORK_BERLIN: 'berlin', HIVE_FORK_LONDON: 'london',
  HIVE_FORK_ARROW_GLACIER: 'arrowGlacier', HIVE_FORK_GRAY_GLACIER: 'grayGlacier', HIVE_MERGE_BLOCK_ID: 'paris',
};

function minimalGenesis(config: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown {
  return { config: { chainId: 1337, ...config }, gasLimit: '0x1c9c380', difficulty: '0x0', alloc: {}, ...extra };
}

function rejects(json: unknown, key: string, detail: RegExp): void {
  assert.throws(() => parseGethGenesis(json), (error: unknown) =>
    error instanceof GenesisFormatError && error.name === 'GenesisFormatError' && error.key === key && detail.test(error.message));
}

describe('parseGethGenesis', () => {
  for (const folder of ['hive-eth-chain', 'execution-apis']) {
    it(`${folder}: the schedule equals forkenv.json fork by fork, blob parameters included`, () => {
      const genesis = parseGethGenesis(readJson(`${folder}/genesis.json`));
      const env = readJson(`${folder}/forkenv.json`) as Record<string, string>;
      assert.equal(genesis.chainId, BigInt(env.HIVE_CHAIN_ID!));
      const expected = new Map<string, { block?: number; timestamp?: number; blob?: unknown }>();
      for (const [key, value] of Object.entries(env)) {
        const name = FORKENV_BLOCKS[key];
        if (name) expected.set(name, { block: Number(value) });
        const time = /^HIVE_(\w+)_TIMESTAMP$/.exec(key);
        if (time) {
          const fork = time[1]!.toLowerCase();
          const blob = env[`HIVE_${time[1]}_BLOB_TARGET`] === undefined ? undefined : {
            target: Number(env[`HIVE_${time[1]}_BLOB_TARGET`]), max: Number(env[`HIVE_${time[1]}_BLOB_MAX`]),
            baseFeeUpdateFraction: BigInt(env[`HIVE_${time[1]}_BLOB_BASE_FEE_UPDATE_FRACTION`]!),
          };
          expected.set(fork, blob === undefined ? { timestamp: Number(value) } : { timestamp: Number(value), blob });
        }
      }
      const actual = new Map(genesis.schedule.forks.map(({ name, block, timestamp, blob }) =>
        [name, { ...(block === undefined ? {} : { block }), ...(timestamp === undefined ? {} : { timestamp }), ...(blob === undefined ? {} : { blob }) }]));
      assert.deepEqual(actual, expected);
      assert.equal(genesis.terminalTotalDifficulty, BigInt(env.HIVE_TERMINAL_TOTAL_DIFFICULTY!));
    });
  }

  it('hive-eth-chain genesis header: London and Shanghai at genesis, Cancun later', () => {
    const { header } = parseGethGenesis(readJson('hive-eth-chain/genesis.json'));
    assert.equal(header.number, 0);
    assert.equal(header.baseFeePerGas, 1_000_000_000n);
    assert.equal(header.withdrawalsRoot, EMPTY_TRIE_ROOT);
    assert.equal(header.blobGasUsed, undefined);
    assert.equal(header.gasLimit, 0x11e1a300n);
    assert.equal(header.difficulty, 0x20000n);
    assert.equal(header.extraData, '0x68697665636861696e');
    assert.equal(header.nonce, '0x0000000000000000');
    assert.equal(header.sha3Uncles, EMPTY_UNCLES_HASH);
  });

  it('execution-apis genesis header is pre-London: no base fee', () => {
    const { header, schedule } = parseGethGenesis(readJson('execution-apis/genesis.json'));
    assert.equal(header.baseFeePerGas, undefined);
    assert.equal(forkAt(schedule, header), 'homestead');
    assert.deepEqual(blobParamsAt(schedule, { number: 60, timestamp: 540 }), { target: 14, max: 21, baseFeeUpdateFraction: 11684671n, eip7918: true });
    assert.deepEqual(blobParamsAt(schedule, { number: 50, timestamp: 479 }), { target: 6, max: 9, baseFeeUpdateFraction: 5007716n, eip7918: false });
  });

  it('a Prague-at-genesis chain gets blob fields, a zero beacon root and the empty requests hash; quantities may be decimal strings', async () => {
    const genesis = parseGethGenesis(minimalGenesis(
      { chainId: '0x539', londonBlock: 0, mergeNetsplitBlock: 0, shanghaiTime: 0, cancunTime: 0, pragueTime: 0 },
      { alloc: { '0x00000000000000000000000000000000000000aa': { balance: '1000000000000000000' } }, baseFeePerGas: '7' },
    ));
    assert.equal(genesis.chainId, 1337n);
    assert.equal(genesis.header.baseFeePerGas, 7n);
    assert.equal(genesis.header.blobGasUsed, 0n);
    assert.equal(genesis.header.excessBlobGas, 0n);
    assert.equal(genesis.header.parentBeaconBlockRoot, `0x${'00'.repeat(32)}`);
    assert.equal(genesis.header.requestsHash, EMPTY_REQUESTS_HASH);
    assert.deepEqual(blobParamsAt(genesis.schedule, genesis.header), { target: 6, max: 9, baseFeeUpdateFraction: 5007716n, eip7918: false });
    assert.equal(genesis.alloc.get('0x00000000000000000000000000000000000000aa')?.balance, 10n ** 18n);
    const block = buildGenesisBlock(genesis);
    assert.notEqual(block.header.stateRoot, EMPTY_TRIE_ROOT);
  });

  it('an empty alloc has the empty state root', () => {
    assert.equal(genesisStateRoot(new Map()), EMPTY_TRIE_ROOT);
  });

  it('rejects an unknown fork key, naming it', () => {
    rejects(minimalGenesis({ verkleTime: 10 }), 'config.verkleTime', /unknown fork/);
  });

  it('rejects a BPO fork without its blobSchedule entry', () => {
    rejects(minimalGenesis({ shanghaiTime: 0, cancunTime: 0, pragueTime: 0, osakaTime: 0, bpo1Time: 10 }), 'config.blobSchedule.bpo1', /missing for scheduled fork bpo1/);
  });

  it('rejects forks out of order', () => {
    rejects(minimalGenesis({ shanghaiTime: 100, cancunTime: 50 }), 'cancun', /timestamp 50 is out of order/);
  });

  it('rejects bad quantities and a missing chain id', () => {
    rejects(minimalGenesis({ londonBlock: -1 }), 'config.londonBlock', /non-negative/);
    rejects(minimalGenesis({ londonBlock: 'soon' }), 'config.londonBlock', /expected a number/);
    rejects({ config: {}, alloc: {} }, 'config.chainId', /missing/);
    rejects({ alloc: {} }, 'config', /expected a JSON object/);
  });

  it('rejects eip158Block different from eip155Block', () => {
    rejects(minimalGenesis({ eip155Block: 1, eip158Block: 2 }), 'config.eip158Block', /must equal eip155Block/);
  });
});
