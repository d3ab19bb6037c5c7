import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  createDevnet,
  DEFAULT_DEVNET_CONFIG,
  DevnetConfigError,
  devnetForkSchedule,
  devnetGenesis,
  resolveDevnetConfig,
  type DevnetConfigInput,
} from '../../../net/devnet/index.js';
import { blobParamsAt, forkAt, forkId, hashHeader, verifyBlock, type ForkName } from '../../../net/eth/index.js';
import { blocksOf, runDevnet } from './run-devnet.js';

function rejects(input: unknown, key: string, pattern?: RegExp): void {
  assert.throws(
    () => resolveDevnetConfig(input as DevnetConfigInput),
    (error: unknown) => {
      assert.ok(error instanceof DevnetConfigError, `expected DevnetConfigError, got ${String(error)}`);
      assert.equal(error.key, key);
      assert.ok(error.message.includes(`devnet.${key}`), error.message);
      if (pattern !== undefined) assert.match(error.message, pattern);
      return true;
    },
  );
}

describe('devnet config', () => {
  it('resolves no overrides to the defaults, and converts number quantities to bigint', () => {
    assert.deepEqual(resolveDevnetConfig(), { ...DEFAULT_DEVNET_CONFIG, forks: { ...DEFAULT_DEVNET_CONFIG.forks }, bpo1Blob: { ...DEFAULT_DEVNET_CONFIG.bpo1Blob } });
    const config = resolveDevnetConfig({ gasLimit: 36_000_000, bpo1Blob: { baseFeeUpdateFraction: 8_346_193 }, forks: { bpo1: 200 } });
    assert.equal(config.gasLimit, 36_000_000n);
    assert.equal(config.bpo1Blob.baseFeeUpdateFraction, 8_346_193n);
    assert.deepEqual(config.forks, { cancun: 0, prague: 40, osaka: 80, bpo1: 200 });
    assert.equal(resolveDevnetConfig({ seed: undefined, forks: { prague: undefined } }).seed, DEFAULT_DEVNET_CONFIG.seed, 'undefined keeps the default');
  });

  it('rejects finalityLag ≤ reorgDepth, naming the key and the relation', () => {
    rejects({ finalityLag: 2 }, 'finalityLag', /greater than devnet\.reorgDepth \(2\)/);
    rejects({ reorgDepth: 8 }, 'finalityLag');
    rejects({ retainBlocks: 8 }, 'retainBlocks', /greater than devnet\.finalityLag/);
  });

  it('rejects non-positive, non-integer and out-of-range values by key', () => {
    rejects({ blockTimeMs: 0 }, 'blockTimeMs');
    rejects({ chainId: -1 }, 'chainId');
    rejects({ chainId: 1.5 }, 'chainId');
    rejects({ transactionsPerBlock: -1 }, 'transactionsPerBlock');
    rejects({ blobTransactionsPerBlock: -0.5 }, 'blobTransactionsPerBlock');
    rejects({ maxBlobsPerTransaction: 0 }, 'maxBlobsPerTransaction');
    rejects({ maxBlobsPerTransaction: 7 }, 'maxBlobsPerTransaction');
    rejects({ accounts: 1 }, 'accounts');
    rejects({ reorgDepth: 0 }, 'reorgDepth');
    rejects({ reorgEvery: -30 }, 'reorgEvery');
    rejects({ gasLimit: 0 }, 'gasLimit');
    rejects({ gasLimit: 1_000_000n }, 'gasLimit', /setup/);
    rejects({ seed: '' }, 'seed');
    rejects({ seed: 1.5 }, 'seed');
    rejects({ genesisTimestamp: '1700000000' }, 'genesisTimestamp');
  });

  it('rejects unknown keys, fork offsets out of order and impossible blob parameters', () => {
    rejects({ reorgevery: 3 }, 'reorgevery', /known keys/);
    rejects({ forks: { prague: 100, osaka: 50 } }, 'forks.osaka', /forks\.prague/);
    rejects({ forks: { amsterdam: 10 } }, 'forks.amsterdam');
    rejects({ forks: { cancun: -1 } }, 'forks.cancun');
    rejects({ bpo1Blob: { target: 10, max: 9 } }, 'bpo1Blob.max');
    rejects({ bpo1Blob: { baseFeeUpdateFraction: 0 } }, 'bpo1Blob.baseFeeUpdateFraction');
    assert.throws(() => createDevnet({ finalityLag: 1 }), DevnetConfigError);
  });
});

describe('devnet fork schedule and genesis', () => {
  const config = resolveDevnetConfig();
  const schedule = devnetForkSchedule(config);
  const at = (number: number) => ({ number, timestamp: config.genesisTimestamp + 2 * number });

  it('activates Cancun at genesis, Prague at block 20, Osaka at 40 and BPO1 at 60 with 2 s blocks', () => {
    const expected: [number, ForkName][] = [[0, 'cancun'], [19, 'cancun'], [20, 'prague'], [39, 'prague'], [40, 'osaka'], [59, 'osaka'], [60, 'bpo1']];
    for (const [number, fork] of expected) assert.equal(forkAt(schedule, at(number)), fork, `block ${number}`);
    assert.deepEqual(blobParamsAt(schedule, at(60)), { target: 10, max: 15, baseFeeUpdateFraction: 8_346_193n, eip7918: true });
    assert.equal(blobParamsAt(schedule, at(39))!.eip7918, false);
    assert.equal(schedule.chainId, 1337n);
  });

  it('gives each fork its own EIP-2124 fork id', () => {
    const genesis = devnetGenesis(config);
    const ids = [0, 20, 40, 60].map((n) => forkId(schedule, { hash: genesis.hash, timestamp: config.genesisTimestamp }, at(n)).hash);
    assert.equal(new Set(ids).size, 4);
  });

  it('builds a Cancun genesis (blob fields, no requests hash) whose hash is its header hash', () => {
    const genesis = devnetGenesis(config);
    assert.equal(genesis.hash, hashHeader(genesis.header));
    assert.equal(genesis.header.excessBlobGas, 0n);
    assert.equal(genesis.header.requestsHash, undefined);
    assert.equal(genesis.header.baseFeePerGas, 1_000_000_000n);
    assert.equal(Buffer.from(genesis.header.extraData.slice(2), 'hex').toString(), 'cdn-devnet');
    assert.equal(createDevnet().genesis.hash, genesis.hash);
  });

  it('starts with Shanghai blocks when Cancun is scheduled later, and crosses into Cancun validly', async () => {
    const run = await runDevnet({ forks: { cancun: 10, prague: 20, osaka: 30, bpo1: 40 }, reorgEvery: 0, transactionsPerBlock: 4 }, 8);
    assert.equal(run.devnet.genesis.block.header.excessBlobGas, undefined);
    let parent = run.devnet.genesis.block.header;
    for (const block of blocksOf(run)) {
      const { header, transactions, withdrawals } = block.block;
      await verifyBlock({ header, transactions, withdrawals, receipts: block.receipts, parent });
      const cancun = header.number >= 5;
      assert.equal(header.excessBlobGas !== undefined, cancun, `block ${header.number} has blob fields only from Cancun`);
      if (!cancun) assert.ok(transactions.every((tx) => tx.type !== 'eip4844'));
      parent = header;
    }
    assert.equal(run.canonical[5]!.block.header.excessBlobGas, 0n);
  });
});
