import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  blobBaseFee,
  blobParamsAt,
  encodeBlock,
  forkAt,
  GAS_PER_BLOB,
  MAINNET_SCHEDULE,
} from '../../../../net/eth/index.js';
import { TRANSFORM_VERSION, transformBlock, type TransformedBlock } from '../../../../actors/kinds/blobs/transform.js';
import { executionBurnFromReceipts, mainnetFixtureBlocks, receiptGasUsed, referenceFakeExponential, type FixtureBlock } from './support.js';

const fixtures = mainnetFixtureBlocks();
const blobBearing = fixtures.filter((fixture) => blobParamsAt(MAINNET_SCHEDULE, fixture.header) !== undefined);

function transform(fixture: FixtureBlock): TransformedBlock {
  return transformBlock({
    network: 'mainnet',
    schedule: MAINNET_SCHEDULE,
    header: fixture.header,
    transactions: fixture.body.transactions,
    receipts: fixture.receipts,
    blockSizeBytes: fixture.sizeBytes,
    finality: 'finalized',
  });
}

/**
 * Real mainnet blob transactions of the two fixture blocks with several blob senders, in canonical order. The senders
 * include public rollup batchers: 0x6887…2985 posts OP Mainnet batches, 0x5050…76c9 posts Base batches.
 */
const KNOWN_BLOB_TRANSACTIONS: Record<number, { index: number; txHash: string; sender: string; blobs: number }[]> = {
  22162263: [
    { index: 139, txHash: '0xc7238166ecc36ca8d8deeb2ce28b5c8552bfa08a229bf4bdeed967a50affd552', sender: '0x000000633b68f5d8d3a86593ebb815b4663bcbe0', blobs: 1 },
    { index: 140, txHash: '0x901f3ddde0dcb282e2b6fa01ae389ea870f288f402c7677cedff0040bf8399f4', sender: '0x6887246668a3b87f54deb3b94ba47a6f63f32985', blobs: 5 },
  ],
  22869878: [
    { index: 70, txHash: '0xa7f059349d5f8b0eb8b7b9a8145f3f1b1290c0335357c8fe8853d8c3454e60fa', sender: '0x5050f69a9786f081509234f1a7f4684b5e5b76c9', blobs: 3 },
    { index: 138, txHash: '0x4eae12790509f588dba17af0d408d8f0bb2e01391c1a60fa19fde2671dd8b8aa', sender: '0xc94c243f8fb37223f3eb2f7961f7072602a51b8b', blobs: 1 },
  ],
};

describe('blobs transform over mainnet fixture blocks', () => {
  it('covers every Cancun-or-later fixture block (all but the last Shanghai block)', () => {
    assert.deepEqual(blobBearing.map((f) => f.number), [19426587, 22162263, 22431083, 22431084, 22869878]);
  });

  for (const fixture of blobBearing) {
    describe(`block ${fixture.number}`, () => {
      const { header } = fixture;
      const params = blobParamsAt(MAINNET_SCHEDULE, header)!;

      it("reports the header's identity, gas and fee fields", () => {
        const { block } = transform(fixture);
        assert.equal(block.network, 'mainnet');
        assert.equal(block.blockNumber, header.number);
        assert.equal(block.blockHash, fixture.hash);
        assert.equal(block.parentHash, header.parentHash);
        assert.equal(block.timestamp, header.timestamp);
        assert.equal(block.blobGasUsed, header.blobGasUsed!.toString());
        assert.equal(block.excessBlobGas, header.excessBlobGas!.toString());
        assert.equal(block.executionBaseFee, header.baseFeePerGas!.toString());
        assert.equal(block.gasUsed, header.gasUsed.toString());
        assert.equal(block.gasLimit, header.gasLimit.toString());
        assert.equal(block.transactionCount, fixture.body.transactions.length);
        assert.equal(block.transformVersion, TRANSFORM_VERSION);
        assert.equal(block.finality, 'finalized');
      });

      it('size is the RLP length of the whole block', () => {
        const { block } = transform(fixture);
        assert.equal(block.size, encodeBlock({ header, ...fixture.body }).length.toString());
      });

      it('blobCount sums the versioned hashes of type-3 transactions and blobGasUsed is blobCount × 131072', () => {
        const { block } = transform(fixture);
        let hashes = 0;
        for (const tx of fixture.body.transactions) if (tx.type === 'eip4844') hashes += tx.blobVersionedHashes.length;
        assert.equal(block.blobCount, hashes);
        assert.equal(BigInt(block.blobCount) * 131072n, header.blobGasUsed);
        assert.equal(block.blobGasUsed, (BigInt(hashes) * GAS_PER_BLOB).toString());
      });

      it("blobBaseFee is fakeExponential(1, excessBlobGas, fraction) under the block's own fork", () => {
        const { block } = transform(fixture);
        assert.equal(block.blobBaseFee, blobBaseFee(header.excessBlobGas!, params.baseFeeUpdateFraction).toString());
        assert.equal(block.blobBaseFee, referenceFakeExponential(1n, header.excessBlobGas!, params.baseFeeUpdateFraction).toString());
        const continuous = Math.exp(Number(header.excessBlobGas!) / Number(params.baseFeeUpdateFraction));
        assert.ok(Math.abs(Number(block.blobBaseFee) - continuous) < 1, `${block.blobBaseFee} vs e^x = ${continuous}`);
      });

      it('burn figures are exact products, and the execution burn equals Σ receipt gas used × base fee', () => {
        const { block } = transform(fixture);
        const baseFee = header.baseFeePerGas!;
        assert.equal(block.blobEthBurnedWei, (header.blobGasUsed! * BigInt(block.blobBaseFee)).toString());
        assert.equal(block.executionEthBurnedWei, (header.gasUsed * baseFee).toString());
        assert.equal(block.executionEthBurnedWei, executionBurnFromReceipts(fixture.receipts, baseFee).toString());
      });

      it('reserveFeeWei is null before Osaka; target and max are those of the fork at the block', () => {
        const { block } = transform(fixture);
        const fork = forkAt(MAINNET_SCHEDULE, header);
        assert.ok(fork === 'cancun' || fork === 'prague');
        assert.equal(block.reserveFeeWei, null);
        assert.deepEqual([block.targetBlobsPerBlock, block.maxBlobsPerBlock], fork === 'cancun' ? [3, 6] : [6, 9]);
      });

      it('one row per type-3 transaction, in canonical order, with exact per-transaction burns', () => {
        const { block, transactions, transactionIndexes } = transform(fixture);
        const gasUsed = receiptGasUsed(fixture.receipts);
        const expectedIndexes = fixture.body.transactions.flatMap((tx, i) => (tx.type === 'eip4844' ? [i] : []));
        assert.deepEqual(transactionIndexes, expectedIndexes);
        assert.equal(transactions.length, expectedIndexes.length);
        for (const [row, tx] of transactions.entries()) {
          const source = fixture.body.transactions[expectedIndexes[row]!]!;
          assert.ok(source.type === 'eip4844');
          assert.deepEqual(tx.blobVersionedHashes, source.blobVersionedHashes);
          assert.equal(tx.blobCount, source.blobVersionedHashes.length);
          assert.equal(tx.blockNumber, block.blockNumber);
          assert.equal(tx.blockHash, block.blockHash);
          const execution = gasUsed[expectedIndexes[row]!]! * header.baseFeePerGas!;
          const blob = BigInt(tx.blobCount) * 131072n * BigInt(block.blobBaseFee);
          assert.equal(tx.executionBurnedWei, execution.toString());
          assert.equal(tx.blobBurnedWei, blob.toString());
          assert.equal(tx.totalBurnedWei, (execution + blob).toString());
        }
        const blobBurnSum = transactions.reduce((sum, tx) => sum + BigInt(tx.blobBurnedWei), 0n);
        assert.equal(blobBurnSum.toString(), block.blobEthBurnedWei);
      });
    });
  }

  for (const [number, known] of Object.entries(KNOWN_BLOB_TRANSACTIONS)) {
    it(`block ${number}: blob rows carry the real transaction hashes and recovered senders`, () => {
      const fixture = blobBearing.find((f) => f.number === Number(number))!;
      const { transactions, transactionIndexes } = transform(fixture);
      assert.deepEqual(
        transactions.map((tx, row) => ({ index: transactionIndexes[row], txHash: tx.txHash, sender: tx.senderAddress, blobs: tx.blobCount })),
        known,
      );
    });
  }

  it('blob base fees match values computed by hand (e^(excess / fraction), rounded down)', () => {
    const fees = Object.fromEntries(blobBearing.map((f) => [f.number, transform(f).block.blobBaseFee]));
    // e^(27918336 / 3338477) = 4283.80; e^(50593792 / 3338477) = 3816148.79; e^(50462720 / 5007716) = 23789.35.
    assert.equal(fees[22162263], '4283');
    assert.equal(fees[22431083], '3816148');
    assert.equal(fees[22431084], '23789');
    assert.equal(fees[22869878], '1');
  });

  it('the first Prague block is priced with the Prague fraction: the Cancun fraction would give 3669225', () => {
    const first = blobBearing.find((f) => f.number === 22431084)!;
    assert.equal(transform(first).block.blobBaseFee, '23789');
    assert.equal(referenceFakeExponential(1n, first.header.excessBlobGas!, 3_338_477n), 3_669_225n);
  });

  it('a Cancun vector price (excess 10485760 → 23) holds on a derived header', () => {
    const first = blobBearing[0]!;
    const header = { ...first.header, excessBlobGas: 10_485_760n };
    const { block } = transformBlock({ network: 'mainnet', schedule: MAINNET_SCHEDULE, header, transactions: first.body.transactions, receipts: first.receipts, blockSizeBytes: null, finality: 'preview' });
    assert.equal(block.blobBaseFee, '23');
    assert.equal(block.size, null);
  });
});
