import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { devnetAccounts, devnetAuthorities, DEFAULT_DEVNET_CONFIG, nextBaseFee } from '../../../net/devnet/index.js';
import {
  blobBaseFee,
  blobParamsAt,
  calcExcessBlobGas,
  EMPTY_REQUESTS_HASH,
  forkAt,
  GAS_PER_BLOB,
  isForkActive,
  recoverAuthorizationAddress,
  recoverTransactionSender,
  verifyBlock,
  type ForkName,
} from '../../../net/eth/index.js';
import { blocksOf, runDevnet, type DevnetRun } from './run-devnet.js';

const HEAD = 120;
let run: DevnetRun;

before(async () => {
  run = await runDevnet({}, HEAD);
});

describe('devnet blocks (default config, 120 blocks through reorgs)', () => {
  it('every produced block, abandoned ones included, passes verifyBlock with its receipts, withdrawals and parent', async () => {
    assert.ok(run.produced.size > HEAD, 'reorgs produced extra blocks');
    for (const block of run.produced.values()) {
      const { header, transactions, withdrawals, uncles } = block.block;
      if (header.number === 0) continue;
      const parent = run.produced.get(header.parentHash);
      assert.ok(parent, `parent of block ${header.number} was produced`);
      await verifyBlock({ header, transactions, withdrawals, uncles, receipts: block.receipts, parent: parent.block.header, expectedHash: block.hash });
    }
  });

  it('signs every transaction with a devnet account, with consecutive nonces per sender along the canonical chain', () => {
    const accounts = new Set(devnetAccounts(DEFAULT_DEVNET_CONFIG.seed, DEFAULT_DEVNET_CONFIG.accounts).map((a) => a.address));
    const nextNonce = new Map<string, bigint>();
    let count = 0;
    for (const block of blocksOf(run)) {
      for (const tx of block.block.transactions) {
        const sender = recoverTransactionSender(tx);
        assert.ok(accounts.has(sender), `sender ${sender} is a devnet account`);
        assert.equal(tx.nonce, nextNonce.get(sender) ?? 0n, `nonce of ${sender} in block ${block.block.header.number}`);
        nextNonce.set(sender, tx.nonce + 1n);
        assert.equal(tx.chainId, 1337n);
        count++;
      }
    }
    assert.ok(count >= HEAD * DEFAULT_DEVNET_CONFIG.transactionsPerBlock);
  });

  it('mixes legacy, EIP-2930, EIP-1559, blob and set-code transactions', () => {
    const types = new Set(blocksOf(run).flatMap((block) => block.block.transactions.map((tx) => tx.type)));
    assert.deepEqual([...types].sort(), ['eip1559', 'eip2930', 'eip4844', 'eip7702', 'legacy']);
  });

  it('pays at least the base fee and the blob base fee, and keeps gas within limits', () => {
    for (const block of blocksOf(run)) {
      const { header, transactions } = block.block;
      const baseFee = header.baseFeePerGas!;
      const blobFee = blobBaseFee(header.excessBlobGas!, blobParamsAt(run.devnet.schedule, header)!.baseFeeUpdateFraction);
      let cumulative = 0n;
      transactions.forEach((tx, i) => {
        if (tx.type === 'legacy' || tx.type === 'eip2930') assert.ok(tx.gasPrice >= baseFee);
        else {
          assert.ok(tx.maxFeePerGas >= baseFee, `maxFeePerGas ≥ baseFee in block ${header.number}`);
          assert.ok(tx.maxPriorityFeePerGas <= tx.maxFeePerGas);
        }
        if (tx.type === 'eip4844') assert.ok(tx.maxFeePerBlobGas >= blobFee, `maxFeePerBlobGas ≥ blob base fee in block ${header.number}`);
        const receipt = block.receipts[i]!;
        assert.ok(tx.gas <= header.gasLimit - cumulative, 'the gas limit fits what is left of the block');
        assert.ok(receipt.cumulativeGasUsed - cumulative <= tx.gas, 'gas used ≤ gas limit');
        assert.ok(receipt.cumulativeGasUsed - cumulative >= 21_000n, 'gas used ≥ intrinsic gas');
        cumulative = receipt.cumulativeGasUsed;
      });
      assert.equal(header.gasUsed, cumulative);
    }
  });

  it('sets the base fee by the EIP-1559 rule, and it moves both ways', () => {
    let rises = 0;
    let falls = 0;
    const chain = run.canonical;
    for (let n = 1; n < chain.length; n++) {
      const parent = chain[n - 1]!.block.header;
      const header = chain[n]!.block.header;
      assert.equal(header.baseFeePerGas, nextBaseFee(parent), `base fee of block ${n}`);
      if (header.baseFeePerGas! > parent.baseFeePerGas!) rises++;
      if (header.baseFeePerGas! < parent.baseFeePerGas!) falls++;
    }
    assert.ok(rises > 10 && falls > 10, `base fee rose ${rises} and fell ${falls} times`);
  });

  it('evolves excess blob gas by calcExcessBlobGas under the child fork, above zero and above the minimum fee', () => {
    let firstNonZero: number | undefined;
    let maxFee = 0n;
    const chain = run.canonical;
    for (let n = 1; n < chain.length; n++) {
      const parent = chain[n - 1]!.block.header;
      const header = chain[n]!.block.header;
      const params = blobParamsAt(run.devnet.schedule, header)!;
      assert.equal(header.excessBlobGas, calcExcessBlobGas(parent, params), `excess blob gas of block ${n}`);
      const blobs = Number(header.blobGasUsed! / GAS_PER_BLOB);
      assert.ok(blobs <= params.max, `block ${n} carries ${blobs} blobs, fork max ${params.max}`);
      if (header.excessBlobGas! > 0n) firstNonZero ??= n;
      const fee = blobBaseFee(header.excessBlobGas!, params.baseFeeUpdateFraction);
      if (fee > maxFee) maxFee = fee;
    }
    assert.ok(firstNonZero !== undefined && firstNonZero <= 30, `excess blob gas is non-zero from block ${firstNonZero}`);
    assert.ok(maxFee > 1n, `blob base fee rose to ${maxFee}`);
  });

  it('gives each blob transaction 1..maxBlobsPerTransaction 0x01-versioned hashes', () => {
    for (const block of blocksOf(run)) {
      for (const tx of block.block.transactions) {
        if (tx.type !== 'eip4844') continue;
        assert.ok(tx.blobVersionedHashes.length >= 1 && tx.blobVersionedHashes.length <= DEFAULT_DEVNET_CONFIG.maxBlobsPerTransaction);
        for (const hash of tx.blobVersionedHashes) assert.match(hash, /^0x01[0-9a-f]{62}$/);
      }
    }
  });

  it('crosses Cancun → Prague → Osaka → BPO1 in order, with the header fields of each fork', () => {
    const seen: ForkName[] = [];
    for (const block of run.canonical) {
      const { header } = block.block;
      const fork = forkAt(run.devnet.schedule, header);
      if (seen.at(-1) !== fork) seen.push(fork);
      assert.ok(header.parentBeaconBlockRoot !== undefined && header.withdrawalsRoot !== undefined);
      const prague = isForkActive(run.devnet.schedule, 'prague', header);
      assert.equal(header.requestsHash, prague ? EMPTY_REQUESTS_HASH : undefined, `requestsHash of block ${header.number}`);
      assert.equal(header.difficulty, 0n);
      assert.equal(header.nonce, '0x0000000000000000');
    }
    assert.deepEqual(seen, ['cancun', 'prague', 'osaka', 'bpo1']);
  });

  it('includes set-code transactions only once Prague is active, with authorizations from the authorities in nonce order', () => {
    const authorities = new Set(devnetAuthorities(DEFAULT_DEVNET_CONFIG.seed).map((a) => a.address));
    const nextNonce = new Map<string, bigint>();
    let setCode = 0;
    for (const block of blocksOf(run)) {
      const prague = isForkActive(run.devnet.schedule, 'prague', block.block.header);
      for (const tx of block.block.transactions) {
        if (tx.type !== 'eip7702') continue;
        assert.ok(prague, `set-code transaction in pre-Prague block ${block.block.header.number}`);
        setCode++;
        for (const auth of tx.authorizationList) {
          const authority = recoverAuthorizationAddress(auth);
          assert.ok(authorities.has(authority));
          assert.ok(auth.chainId === 0n || auth.chainId === 1337n);
          assert.equal(auth.nonce, nextNonce.get(authority) ?? 0n);
          nextNonce.set(authority, auth.nonce + 1n);
        }
      }
    }
    assert.ok(setCode > 0);
  });

  it('numbers withdrawals consecutively along the canonical chain', () => {
    let next = 0n;
    for (const block of blocksOf(run)) {
      for (const withdrawal of block.block.withdrawals) {
        assert.equal(withdrawal.index, next);
        next++;
      }
    }
    assert.ok(next > 0n);
  });

  it('advances timestamps by ceil(blockTimeMs / 1000) seconds per block from the genesis timestamp', () => {
    for (const block of run.canonical) {
      assert.equal(block.block.header.timestamp, DEFAULT_DEVNET_CONFIG.genesisTimestamp + 2 * block.block.header.number);
    }
  });
});

describe('nextBaseFee', () => {
  const parent = { gasLimit: 30_000_000n, baseFeePerGas: 1_000_000_000n };
  it('keeps the base fee at the target, rises 12.5 % when full and falls 12.5 % when empty', () => {
    assert.equal(nextBaseFee({ ...parent, gasUsed: 15_000_000n }), 1_000_000_000n);
    assert.equal(nextBaseFee({ ...parent, gasUsed: 30_000_000n }), 1_125_000_000n);
    assert.equal(nextBaseFee({ ...parent, gasUsed: 0n }), 875_000_000n);
    assert.equal(nextBaseFee({ gasLimit: 30_000_000n, baseFeePerGas: 7n, gasUsed: 15_000_001n }), 8n, 'a rise is at least 1 wei');
  });
});
