import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GenesisFormatError } from '../../../net/eth/errors.js';
import { MAINNET_SCHEDULE } from '../../../net/eth/fork-schedule.js';
import { formatGethGenesis } from '../../../net/eth/genesis-format.js';
import { buildGenesisBlock } from '../../../net/eth/genesis-state.js';
import { parseGethGenesis } from '../../../net/eth/genesis.js';
import { readJson } from './fixtures.js';

function sourceOf(folder: string) {
  const parsed = parseGethGenesis(readJson(`${folder}/genesis.json`));
  return { parsed, source: { schedule: parsed.schedule, header: buildGenesisBlock(parsed).header, alloc: parsed.alloc, terminalTotalDifficulty: parsed.terminalTotalDifficulty! } };
}

describe('formatGethGenesis', () => {
  for (const folder of ['hive-eth-chain', 'execution-apis']) {
    it(`${folder}: the written genesis.json reads back as the same chain (hash, schedule, alloc with code and storage, total difficulty)`, () => {
      const { parsed, source } = sourceOf(folder);
      const written = parseGethGenesis(JSON.parse(JSON.stringify(formatGethGenesis(source))));
      assert.equal(buildGenesisBlock(written).hash, buildGenesisBlock(parsed).hash);
      assert.deepEqual(written.schedule, parsed.schedule);
      assert.deepEqual(written.alloc, parsed.alloc);
      const accounts = [...written.alloc.values()];
      assert.ok(accounts.some((account) => account.code !== '0x') && accounts.some((account) => account.storage.size > 0), 'the fixture has code and storage');
      assert.equal(written.terminalTotalDifficulty, parsed.terminalTotalDifficulty);
    });
  }

  it('refuses a genesis whose state root is not its alloc\'s, naming the field', () => {
    const { source } = sourceOf('hive-eth-chain');
    const header = { ...source.header, stateRoot: `0x${'11'.repeat(32)}` as const };
    assert.throws(() => formatGethGenesis({ ...source, header }), (error: unknown) =>
      error instanceof GenesisFormatError && error.key === 'genesis' && /stateRoot: 0x[0-9a-f]{64} instead of 0x1{64}/.test(error.message));
  });

  it('refuses a header field geth derives otherwise (a withdrawals root other than the empty trie)', () => {
    const { source } = sourceOf('hive-eth-chain');
    assert.throws(() => formatGethGenesis({ ...source, header: { ...source.header, withdrawalsRoot: `0x${'22'.repeat(32)}` } }), (error: unknown) =>
      error instanceof GenesisFormatError && error.key === 'genesis' && /withdrawalsRoot: 0x56e81f/.test(error.message));
  });

  it('refuses a fork activated by total difficulty (mainnet\'s merge), which has no fork key', () => {
    const { source } = sourceOf('hive-eth-chain');
    assert.throws(() => formatGethGenesis({ ...source, schedule: MAINNET_SCHEDULE }), (error: unknown) =>
      error instanceof GenesisFormatError && error.key === 'paris');
  });
});
