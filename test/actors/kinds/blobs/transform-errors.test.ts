import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createForkSchedule, MAINNET_SCHEDULE, type BlockHeader } from '../../../../net/eth/index.js';
import {
  BlobsBlockBeforeCancunError,
  BlobsMaterialMismatchError,
  BlobsReceiptsRequiredError,
  BlobsTransformError,
} from '../../../../actors/kinds/blobs/errors.js';
import { transformBlock, type TransformBlockInput } from '../../../../actors/kinds/blobs/transform.js';
import { mainnetFixtureBlocks, type FixtureBlock } from './support.js';

const fixtures = new Map(mainnetFixtureBlocks().map((f) => [f.number, f]));
const lastShanghai = fixtures.get(19_426_586)!;
const withBlobs = fixtures.get(22_162_263)!;

function input(fixture: FixtureBlock, overrides: Partial<TransformBlockInput> = {}): TransformBlockInput {
  return {
    network: 'mainnet',
    schedule: MAINNET_SCHEDULE,
    header: fixture.header,
    transactions: fixture.body.transactions,
    receipts: fixture.receipts,
    blockSizeBytes: fixture.sizeBytes,
    finality: 'included',
    ...overrides,
  };
}

/** Asserts the error class, its spec code, and that the message names the block by number and hash. */
function assertBlockError(run: () => unknown, errorClass: new (...args: never[]) => BlobsTransformError, code: string, fixture: FixtureBlock, text: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof errorClass, `expected ${errorClass.name}, got ${String(error)}`);
    assert.equal(error.code, code);
    assert.equal(error.blockNumber, fixture.number);
    assert.equal(error.blockHash, fixture.hash);
    assert.ok(error.message.includes(String(fixture.number)) && error.message.includes(fixture.hash), error.message);
    assert.match(error.message, text);
    return true;
  });
}

describe('blobs transform refusals', () => {
  it('a pre-Cancun block is refused, pointing at the start block configuration', () => {
    assertBlockError(() => transformBlock(input(lastShanghai)), BlobsBlockBeforeCancunError, 'invalid_request', lastShanghai, /start block at or after the Cancun activation/);
  });

  it('a block with transactions but no receipts is refused, naming the block', () => {
    assertBlockError(() => transformBlock(input(withBlobs, { receipts: null })), BlobsReceiptsRequiredError, 'unsupported_capability', withBlobs, /receipts are required/);
    const noBlobTxs = fixtures.get(19_426_587)!;
    assertBlockError(() => transformBlock(input(noBlobTxs, { receipts: null })), BlobsReceiptsRequiredError, 'unsupported_capability', noBlobTxs, /receipts/);
  });

  it('a block without transactions needs no receipts', () => {
    const header: BlockHeader = { ...withBlobs.header, gasUsed: 0n, blobGasUsed: 0n };
    const { block, transactions } = transformBlock(input(withBlobs, { header, transactions: [], receipts: null, blockHash: withBlobs.hash }));
    assert.deepEqual([block.transactionCount, block.blobCount, block.executionEthBurnedWei, transactions.length], [0, 0, '0', 0]);
  });

  it('receipts that do not belong to the transactions are refused', () => {
    assertBlockError(() => transformBlock(input(withBlobs, { receipts: withBlobs.receipts.slice(1) })), BlobsMaterialMismatchError, 'internal', withBlobs, /receipts for 142 transactions/);
    const swapped = [...withBlobs.receipts];
    [swapped[0], swapped[1]] = [swapped[1]!, swapped[0]!];
    assertBlockError(() => transformBlock(input(withBlobs, { receipts: swapped })), BlobsMaterialMismatchError, 'internal', withBlobs, /cumulativeGasUsed/);
  });

  it('blob transactions that do not account for the header blobGasUsed are refused', () => {
    const blobTxIndex = withBlobs.body.transactions.findLastIndex((tx) => tx.type === 'eip4844');
    const skip = <T>(items: readonly T[]) => items.filter((_, i) => i !== blobTxIndex);
    assertBlockError(
      () => transformBlock(input(withBlobs, { transactions: skip(withBlobs.body.transactions), receipts: skip(withBlobs.receipts) })),
      BlobsMaterialMismatchError, 'internal', withBlobs, /blobGasUsed/,
    );
  });

  it('a schedule that puts a Shanghai header in Cancun is refused as a mismatch', () => {
    const cancunFromGenesis = createForkSchedule(1n, [{ name: 'cancun', timestamp: 0, inForkId: true, blob: { target: 3, max: 6, baseFeeUpdateFraction: 3_338_477n } }]);
    assertBlockError(() => transformBlock(input(lastShanghai, { schedule: cancunFromGenesis })), BlobsMaterialMismatchError, 'internal', lastShanghai, /schedule/);
  });

  it('a block size that is not a positive integer is refused', () => {
    for (const blockSizeBytes of [1.5, 0, -1]) {
      assert.throws(() => transformBlock(input(withBlobs, { blockSizeBytes })), (error: unknown) => error instanceof RangeError && error.message.includes(withBlobs.hash));
    }
  });
});
