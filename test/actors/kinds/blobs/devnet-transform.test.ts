import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { DevnetBlock } from '../../../../net/devnet/index.js';
import { blobReservePrice, encodeBlock, encodeBlockBody, encodeHeader, forkAt, RlpDecodeError, type ForkName } from '../../../../net/eth/index.js';
import { blockRlpSize } from '../../../../net/eth/block-rlp-size.js';
import { scheduleActivationsAt, scheduleRows } from '../../../../actors/kinds/blobs/schedule.js';
import { transformBlock, type TransformedBlock } from '../../../../actors/kinds/blobs/transform.js';
import { defaultDevnetChain, DEVNET_BLOCK_COUNT, executionBurnFromReceipts, receiptGasUsed, type DevnetChain } from './support.js';

interface Transformed {
  source: DevnetBlock;
  fork: ForkName;
  result: TransformedBlock;
}

const BLOB_LIMITS: Partial<Record<ForkName, [number, number]>> = { cancun: [3, 6], prague: [6, 9], osaka: [6, 9], bpo1: [10, 15] };

describe('blobs transform over the default devnet chain (Cancun → Prague → Osaka → BPO1)', () => {
  let chain: DevnetChain;
  let transformed: Transformed[];

  before(async () => {
    chain = await defaultDevnetChain();
    transformed = chain.blocks.map((source) => ({
      source,
      fork: forkAt(chain.schedule, source.block.header),
      result: transformBlock({
        network: 'devnet',
        schedule: chain.schedule,
        header: source.block.header,
        transactions: source.block.transactions,
        receipts: source.receipts,
        blockSizeBytes: encodeBlock(source.block).length,
        finality: 'included',
        blockHash: source.hash,
      }),
    }));
  });

  it(`transforms all ${DEVNET_BLOCK_COUNT} blocks and reaches every blob fork`, () => {
    assert.equal(transformed.length, DEVNET_BLOCK_COUNT);
    assert.deepEqual([...new Set(transformed.map((t) => t.fork))], ['cancun', 'prague', 'osaka', 'bpo1']);
  });

  it('the given block hash is the header hash', () => {
    for (const { source, result } of transformed) assert.equal(result.block.blockHash, source.hash);
  });

  it('reserveFeeWei is 8192 × base fee from Osaka on and null before', () => {
    for (const { source, fork, result } of transformed) {
      const eip7918 = fork === 'osaka' || fork === 'bpo1';
      const expected = eip7918 ? blobReservePrice(source.block.header.baseFeePerGas!).toString() : null;
      assert.equal(result.block.reserveFeeWei, expected, `block ${source.block.header.number} (${fork})`);
      if (eip7918) assert.equal(result.block.reserveFeeWei, (8192n * source.block.header.baseFeePerGas!).toString());
    }
  });

  it('target and max blobs follow the fork, switching to 10/15 at the first BPO1 block', () => {
    for (const { source, fork, result } of transformed) {
      assert.deepEqual([result.block.targetBlobsPerBlock, result.block.maxBlobsPerBlock], BLOB_LIMITS[fork], `block ${source.block.header.number}`);
    }
    const firstBpo1 = transformed.findIndex((t) => t.fork === 'bpo1');
    assert.ok(firstBpo1 > 0);
    assert.deepEqual([transformed[firstBpo1 - 1]!.result.block.targetBlobsPerBlock, transformed[firstBpo1]!.result.block.targetBlobsPerBlock], [6, 10]);
  });

  it('the blob base fee rises above 1 and every block stays within its fork maximum', () => {
    assert.ok(transformed.some((t) => BigInt(t.result.block.blobBaseFee) > 1n));
    for (const { result } of transformed) assert.ok(result.block.blobCount <= result.block.maxBlobsPerBlock);
    assert.ok(transformed.some((t) => t.result.transactions.length > 0));
  });

  it('per-transaction burns add up: Σ blob burn = block blob burn, execution burn from receipt gas', () => {
    for (const { source, result } of transformed) {
      const baseFee = source.block.header.baseFeePerGas!;
      const gasUsed = receiptGasUsed(source.receipts);
      const blobBurn = result.transactions.reduce((sum, tx) => sum + BigInt(tx.blobBurnedWei), 0n);
      assert.equal(blobBurn.toString(), result.block.blobEthBurnedWei);
      assert.equal(result.block.executionEthBurnedWei, executionBurnFromReceipts(source.receipts, baseFee).toString());
      for (const [row, tx] of result.transactions.entries()) {
        assert.equal(tx.executionBurnedWei, (gasUsed[result.transactionIndexes[row]!]! * baseFee).toString());
        assert.equal(BigInt(tx.totalBurnedWei), BigInt(tx.executionBurnedWei) + BigInt(tx.blobBurnedWei));
      }
    }
  });

  it('blockRlpSize from stored header and body RLP equals the encoded block length', () => {
    for (const { source, result } of transformed) {
      const size = blockRlpSize(encodeHeader(source.block.header), encodeBlockBody(source.block));
      assert.equal(size.toString(), result.block.size);
    }
    const { block } = transformed[0]!.source;
    const body = encodeBlockBody(block);
    assert.throws(() => blockRlpSize(Uint8Array.of(0x80), body), RlpDecodeError);
    assert.throws(() => blockRlpSize(encodeHeader(block.header), body.subarray(0, body.length - 1)), RlpDecodeError);
  });

  it('scheduleActivationsAt finds each fork at its first block, matching the resolver from the block time', () => {
    const rows = scheduleRows(chain.schedule, chain.genesis, 'configured');
    assert.equal(rows.find((row) => row.name === 'cancun')!.activationBlock, 0);
    const seen = new Map<string, number | null>();
    let parentTimestamp = chain.genesis.timestamp;
    for (const { source } of transformed) {
      for (const row of scheduleActivationsAt(rows, source.block.header, parentTimestamp)) seen.set(row.name, row.activationBlock);
      parentTimestamp = source.block.header.timestamp;
    }
    assert.deepEqual(Object.fromEntries(seen), { prague: 20, osaka: 40, bpo1: 60 });
    const resolved = scheduleRows(chain.schedule, chain.genesis, 'configured', (timestamp) => (timestamp - chain.genesis.timestamp) / chain.secondsPerBlock);
    assert.deepEqual(resolved.map((row) => [row.name, row.activationBlock]), [['cancun', 0], ['prague', 20], ['osaka', 40], ['bpo1', 60]]);
  });
});
