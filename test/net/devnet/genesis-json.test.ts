import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEVNET_CONTRACT_CODE,
  DEVNET_CONTRACTS,
  devnetAccounts,
  devnetForkSchedule,
  devnetGenesis,
  devnetGenesisJson,
  INITIAL_ACCOUNT_ETH_BALANCE,
  resolveDevnetConfig,
  type DevnetConfig,
  type DevnetConfigInput,
} from '../../../net/devnet/index.js';
import { buildGenesisBlock, forkId, parseGethGenesis } from '../../../net/eth/index.js';

/** The file as a follower reads it: written as JSON text, parsed, its genesis block built from the alloc. */
function readBack(config: DevnetConfig) {
  const parsed = parseGethGenesis(JSON.parse(JSON.stringify(devnetGenesisJson(config))));
  return { parsed, built: buildGenesisBlock(parsed) };
}

/** Every timestamp where a fork id could change: genesis, and each activation and the second before it. */
function probeTimes(config: DevnetConfig): number[] {
  const activations = devnetForkSchedule(config).forks.flatMap((fork) => (fork.timestamp === undefined ? [] : [fork.timestamp - 1, fork.timestamp]));
  return [...new Set([config.genesisTimestamp, ...activations, config.genesisTimestamp + 1_000])].filter((t) => t >= config.genesisTimestamp).sort((a, b) => a - b);
}

const CASES: ReadonlyArray<[string, DevnetConfigInput, number]> = [
  ['the default config (Prague, Osaka and BPO1 after genesis)', {}, 4],
  ['every fork at genesis', { forks: { prague: 0, osaka: 0, bpo1: 0 } }, 1],
  ['another seed, chain id and account count, with Shanghai blocks before Cancun', { seed: 'other', chainId: 4242, accounts: 3, forks: { cancun: 10, prague: 20, osaka: 30, bpo1: 40 } }, 5],
];

describe('devnet genesis.json', () => {
  for (const [label, input, distinctIds] of CASES) {
    it(`${label}: parseGethGenesis and buildGenesisBlock give the devnet's genesis block, schedule and fork ids`, () => {
      const config = resolveDevnetConfig(input);
      const devnet = devnetGenesis(config);
      const { parsed, built } = readBack(config);
      assert.equal(built.hash, devnet.hash);
      assert.deepEqual(built.header, devnet.header);
      assert.equal(parsed.chainId, BigInt(config.chainId));
      assert.deepEqual(parsed.schedule, devnetForkSchedule(config));
      const ids = probeTimes(config).map((timestamp) => {
        const at = { number: Number.MAX_SAFE_INTEGER, timestamp };
        const expected = forkId(devnetForkSchedule(config), { hash: devnet.hash, timestamp: config.genesisTimestamp }, at);
        assert.deepEqual(forkId(parsed.schedule, { hash: built.hash, timestamp: built.header.timestamp }, at), expected, `fork id at ${timestamp}`);
        return expected.hash;
      });
      assert.equal(new Set(ids).size, distinctIds);
    });
  }

  it('allocs ETH to every sending account and stand-in code to every devnet contract, and says the chain merged at genesis', () => {
    const config = resolveDevnetConfig({ accounts: 5 });
    const json = devnetGenesisJson(config);
    const { parsed } = readBack(config);
    for (const { address } of devnetAccounts(config.seed, 5)) assert.equal(parsed.alloc.get(address)?.balance, INITIAL_ACCOUNT_ETH_BALANCE, address);
    const contracts = [...DEVNET_CONTRACTS.tokens, ...DEVNET_CONTRACTS.pools.map((pool) => pool.address), DEVNET_CONTRACTS.router, DEVNET_CONTRACTS.disperse, DEVNET_CONTRACTS.delegate];
    for (const address of contracts) assert.equal(parsed.alloc.get(address)?.code, DEVNET_CONTRACT_CODE, address);
    assert.equal(parsed.alloc.size, 5 + contracts.length);
    assert.equal(parsed.terminalTotalDifficulty, 0n);
    assert.equal((json.config as Record<string, unknown>).mergeNetsplitBlock, 0);
  });
});
