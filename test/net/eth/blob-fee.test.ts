import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BLOB_BASE_COST,
  blobBaseFee,
  blobGasBurned,
  blobReservePrice,
  calcExcessBlobGas,
  executionGasBurned,
  fakeExponential,
  GAS_PER_BLOB,
  MIN_BASE_FEE_PER_BLOB_GAS,
} from '../../../net/eth/blob-fee.js';
import { listBlobSchedule } from '../../../net/eth/blob-schedule.js';
import { blobParamsAt, createForkSchedule, MAINNET_GENESIS_HASH, MAINNET_SCHEDULE } from '../../../net/eth/fork-schedule.js';
import { readJson } from './fixtures.js';

interface BlobFeeVectors {
  constants: { GAS_PER_BLOB: number; MIN_BASE_FEE_PER_BLOB_GAS: number; BLOB_BASE_COST: number };
  fakeExponential: { factor: number; numerator: number; denominator: number; want: number }[];
  blobBaseFeeCancun: { updateFraction: number; cases: { excessBlobGas: number; blobBaseFee: number }[] };
  excessBlobGasCancun: { targetBlobs: number; cases: { parentExcess: number; parentBlobs: number; want: number }[] };
  excessBlobGasEIP7918: {
    targetBlobs: number; maxBlobs: number; updateFraction: number;
    cases: { name: string; parentExcess: number; parentBaseFee: number; parentBlobs: number; want: number }[];
  };
  excessBlobGasPostOsakaDevnet: {
    note: string;
    cases: { parentExcess: number; parentBlobGasUsed: number; parentBaseFee: number; parentTime: number; headerTime: number; want: number }[];
  };
  mainnetBlobSchedule: {
    forks: { name: string; activationTimestamp: number; target: number; max: number; baseFeeUpdateFraction: number; eip7918: boolean }[];
  };
}

const vectors = readJson('vectors/blob-fee.json') as BlobFeeVectors;

/** The BPO devnet the vector file's note describes (Osaka at 0, then BPO1..BPO3). */
const BPO_DEVNET = createForkSchedule(7n, [
  { name: 'osaka', timestamp: 0, inForkId: true, blob: { target: 6, max: 9, baseFeeUpdateFraction: 5007716n } },
  { name: 'bpo1', timestamp: 1754836608, inForkId: true, blob: { target: 9, max: 14, baseFeeUpdateFraction: 8832827n } },
  { name: 'bpo2', timestamp: 1754934912, inForkId: true, blob: { target: 14, max: 21, baseFeeUpdateFraction: 13739630n } },
  { name: 'bpo3', timestamp: 1755033216, inForkId: true, blob: { target: 21, max: 32, baseFeeUpdateFraction: 20609697n } },
]);

describe('blob fee math (fixtures/vectors/blob-fee.json)', () => {
  it('constants equal the vector file', () => {
    assert.equal(GAS_PER_BLOB, BigInt(vectors.constants.GAS_PER_BLOB));
    assert.equal(MIN_BASE_FEE_PER_BLOB_GAS, BigInt(vectors.constants.MIN_BASE_FEE_PER_BLOB_GAS));
    assert.equal(BLOB_BASE_COST, BigInt(vectors.constants.BLOB_BASE_COST));
    assert.equal(BLOB_BASE_COST, 2n ** 13n);
  });

  it(`fakeExponential matches all ${vectors.fakeExponential.length} vectors`, () => {
    for (const v of vectors.fakeExponential) {
      assert.equal(fakeExponential(BigInt(v.factor), BigInt(v.numerator), BigInt(v.denominator)), BigInt(v.want), JSON.stringify(v));
    }
  });

  it('fakeExponential rejects a non-positive denominator', () => {
    assert.throws(() => fakeExponential(1n, 1n, 0n), RangeError);
  });

  it(`blobBaseFee matches all ${vectors.blobBaseFeeCancun.cases.length} Cancun vectors`, () => {
    const fraction = BigInt(vectors.blobBaseFeeCancun.updateFraction);
    for (const v of vectors.blobBaseFeeCancun.cases) {
      assert.equal(blobBaseFee(BigInt(v.excessBlobGas), fraction), BigInt(v.blobBaseFee), JSON.stringify(v));
    }
  });

  it(`calcExcessBlobGas matches all ${vectors.excessBlobGasCancun.cases.length} Cancun (EIP-4844) vectors`, () => {
    const params = { target: vectors.excessBlobGasCancun.targetBlobs, max: 6, baseFeeUpdateFraction: 3338477n, eip7918: false };
    for (const v of vectors.excessBlobGasCancun.cases) {
      const parent = { excessBlobGas: BigInt(v.parentExcess), blobGasUsed: BigInt(v.parentBlobs) * GAS_PER_BLOB };
      assert.equal(calcExcessBlobGas(parent, params), BigInt(v.want), JSON.stringify(v));
    }
  });

  it('calcExcessBlobGas matches the EIP-7918 reserve-price vectors (below and above the reserve)', () => {
    const set = vectors.excessBlobGasEIP7918;
    const params = { target: set.targetBlobs, max: set.maxBlobs, baseFeeUpdateFraction: BigInt(set.updateFraction), eip7918: true };
    assert.equal(set.cases.length, 2);
    for (const v of set.cases) {
      const parent = { excessBlobGas: BigInt(v.parentExcess), blobGasUsed: BigInt(v.parentBlobs) * GAS_PER_BLOB, baseFeePerGas: BigInt(v.parentBaseFee) };
      assert.equal(calcExcessBlobGas(parent, params), BigInt(v.want), v.name);
    }
  });

  it('the same Prague-shaped parent without EIP-7918 takes the EIP-4844 branch', () => {
    const v = vectors.excessBlobGasEIP7918.cases.find((c) => c.name === 'BelowReservePrice')!;
    const parent = { excessBlobGas: BigInt(v.parentExcess), blobGasUsed: BigInt(v.parentBlobs) * GAS_PER_BLOB, baseFeePerGas: BigInt(v.parentBaseFee) };
    assert.equal(calcExcessBlobGas(parent, { target: 6, max: 9, baseFeeUpdateFraction: 5007716n, eip7918: false }), 0n);
  });

  it('calcExcessBlobGas matches the post-Osaka BPO devnet vectors under the child fork (BPO2→BPO3 boundary included)', () => {
    for (const v of vectors.excessBlobGasPostOsakaDevnet.cases) {
      const params = blobParamsAt(BPO_DEVNET, { number: 1, timestamp: v.headerTime });
      assert.ok(params?.eip7918);
      const parent = { excessBlobGas: BigInt(v.parentExcess), blobGasUsed: BigInt(v.parentBlobGasUsed), baseFeePerGas: BigInt(v.parentBaseFee) };
      assert.equal(calcExcessBlobGas(parent, params), BigInt(v.want), JSON.stringify(v));
    }
  });

  it('a parent without blob fields (the last pre-Cancun block) gives zero excess', () => {
    assert.equal(calcExcessBlobGas({}, { target: 3, max: 6, baseFeeUpdateFraction: 3338477n, eip7918: false }), 0n);
  });

  it('MAINNET_SCHEDULE carries the mainnet blob schedule of the vector file, fork by fork', () => {
    const forks = vectors.mainnetBlobSchedule.forks;
    assert.equal(forks.length, 5);
    for (const f of forks) {
      const entry = MAINNET_SCHEDULE.forks.find((fork) => fork.name === f.name);
      assert.ok(entry, f.name);
      assert.equal(entry.timestamp, f.activationTimestamp, f.name);
      assert.deepEqual(entry.blob, { target: f.target, max: f.max, baseFeeUpdateFraction: BigInt(f.baseFeeUpdateFraction) }, f.name);
      const atActivation = blobParamsAt(MAINNET_SCHEDULE, { number: 30_000_000, timestamp: f.activationTimestamp });
      assert.deepEqual(atActivation, { target: f.target, max: f.max, baseFeeUpdateFraction: BigInt(f.baseFeeUpdateFraction), eip7918: f.eip7918 }, f.name);
      const justBefore = blobParamsAt(MAINNET_SCHEDULE, { number: 30_000_000, timestamp: f.activationTimestamp - 1 });
      assert.notDeepEqual(justBefore, atActivation, `${f.name} starts exactly at its timestamp`);
    }
    assert.equal(blobParamsAt(MAINNET_SCHEDULE, { number: 19_000_000, timestamp: 1_710_338_134 }), undefined);
  });

  it('burn helpers multiply gas by price in wei', () => {
    assert.equal(blobGasBurned(786432n, 3n), 2359296n);
    assert.equal(executionGasBurned(30_000_000n, 7_000_000_000n), 210_000_000_000_000_000n);
    assert.equal(blobReservePrice(1_000_000_000n), 8_192_000_000_000n);
  });
});

describe('listBlobSchedule', () => {
  it('lists the mainnet blob forks of the vector file with the fork ids of forkid-mainnet.json', () => {
    const forkIds = readJson('vectors/forkid-mainnet.json') as { cases: { time: number; hash: string }[] };
    const listed = listBlobSchedule(MAINNET_SCHEDULE, { hash: MAINNET_GENESIS_HASH, timestamp: 0 });
    assert.deepEqual(listed.map(({ forkId: _forkId, ...rest }) => rest), vectors.mainnetBlobSchedule.forks.map((f) => ({
      name: f.name, activationTimestamp: f.activationTimestamp, target: f.target, max: f.max,
      baseFeeUpdateFraction: BigInt(f.baseFeeUpdateFraction), eip7918: f.eip7918,
    })));
    for (const entry of listed) {
      assert.equal(entry.forkId, forkIds.cases.find((c) => c.time === entry.activationTimestamp)!.hash, entry.name);
    }
  });
});
