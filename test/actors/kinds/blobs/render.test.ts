import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { MAINNET_GENESIS_HASH, MAINNET_GENESIS_TIMESTAMP, MAINNET_SCHEDULE, blobParamsAt } from '../../../../net/eth/index.js';
import { blockRowFields } from '../../../../actors/kinds/blobs/block-row-fields.js';
import { blockEntries } from '../../../../actors/kinds/blobs/entries.js';
import {
  blockKey,
  blockNumberOfKey,
  blockTxIndexKey,
  blockTxIndexPrefix,
  renderBlock,
  renderChangePayload,
  renderScheduleRow,
  renderTransaction,
  scheduleKey,
  txKey,
  withFinality,
} from '../../../../actors/kinds/blobs/render.js';
import { scheduleRows } from '../../../../actors/kinds/blobs/schedule.js';
import { transformBlock, type TransformedBlock } from '../../../../actors/kinds/blobs/transform.js';
import { FINALITIES, type BlobsBlock } from '../../../../actors/kinds/blobs/types.js';
import { defaultDevnetChain, mainnetFixtureBlocks } from './support.js';

/** Property order of the spec §2.6 tables. */
const SPEC_BLOCK_FIELDS = [
  'network', 'blockNumber', 'blockHash', 'parentHash', 'timestamp', 'size', 'blobCount', 'blobGasUsed', 'excessBlobGas',
  'blobBaseFee', 'blobEthBurnedWei', 'executionBaseFee', 'gasUsed', 'gasLimit', 'executionEthBurnedWei', 'reserveFeeWei',
  'transactionCount', 'targetBlobsPerBlock', 'maxBlobsPerBlock', 'transformVersion', 'finality',
];
const SPEC_TRANSACTION_FIELDS = [
  'network', 'blockNumber', 'blockHash', 'txHash', 'senderAddress', 'blobVersionedHashes', 'blobCount', 'totalBurnedWei',
  'executionBurnedWei', 'blobBurnedWei',
];
const SPEC_SCHEDULE_FIELDS = [
  'name', 'activationBlock', 'activationTimestamp', 'forkId', 'targetBlobsPerBlock', 'maxBlobsPerBlock',
  'baseFeeUpdateFraction', 'eip7918', 'source',
];

/** The only properties the spec types as JSON integers: counts, block numbers, timestamps, versions. */
const INTEGER_FIELDS = new Set([
  'blockNumber', 'timestamp', 'blobCount', 'transactionCount', 'targetBlobsPerBlock', 'maxBlobsPerBlock', 'transformVersion',
  'activationBlock', 'activationTimestamp',
]);
/** Wei and gas quantities: decimal strings (or null where the spec allows). */
const QUANTITY_FIELDS = new Set([
  'size', 'blobGasUsed', 'excessBlobGas', 'blobBaseFee', 'blobEthBurnedWei', 'executionBaseFee', 'gasUsed', 'gasLimit',
  'executionEthBurnedWei', 'reserveFeeWei', 'totalBurnedWei', 'executionBurnedWei', 'blobBurnedWei', 'baseFeeUpdateFraction',
]);

/** Walks parsed JSON; every number must be a safe integer under an integer field, every quantity a decimal string. */
function assertLosslessQuantities(value: unknown, path: string): number {
  let quantities = 0;
  if (Array.isArray(value)) {
    value.forEach((item, i) => (quantities += assertLosslessQuantities(item, `${path}[${i}]`)));
    return quantities;
  }
  if (typeof value !== 'object' || value === null) return 0;
  for (const [key, field] of Object.entries(value)) {
    const at = `${path}.${key}`;
    if (typeof field === 'number') {
      assert.ok(INTEGER_FIELDS.has(key), `${at} is a JSON number but is not an integer field`);
      assert.ok(Number.isSafeInteger(field), `${at} = ${field} is not a safe integer`);
    }
    if (QUANTITY_FIELDS.has(key)) {
      assert.ok(field === null || (typeof field === 'string' && /^(0|[1-9][0-9]*)$/.test(field)), `${at} = ${JSON.stringify(field)} is not a decimal string`);
      quantities += 1;
    }
    quantities += assertLosslessQuantities(field, at);
  }
  return quantities;
}

describe('blobs rendering', () => {
  let results: TransformedBlock[];

  before(async () => {
    const chain = await defaultDevnetChain();
    const mainnet = mainnetFixtureBlocks()
      .filter((f) => blobParamsAt(MAINNET_SCHEDULE, f.header) !== undefined)
      .map((f) => transformBlock({ network: 'mainnet', schedule: MAINNET_SCHEDULE, header: f.header, transactions: f.body.transactions, receipts: f.receipts, blockSizeBytes: f.sizeBytes, finality: 'finalized' }));
    const devnet = chain.blocks.map((b) => transformBlock({ network: 'devnet', schedule: chain.schedule, header: b.block.header, transactions: b.block.transactions, receipts: b.receipts, blockSizeBytes: null, finality: 'preview' }));
    results = [...mainnet, ...devnet];
  });

  it('every large quantity in rendered blocks, transactions and change payloads is a decimal string', () => {
    let checked = 0;
    for (const result of results) {
      checked += assertLosslessQuantities(JSON.parse(renderBlock(result.block).toString('utf8')), 'block');
      for (const tx of result.transactions) checked += assertLosslessQuantities(JSON.parse(renderTransaction(tx).toString('utf8')), 'transaction');
      checked += assertLosslessQuantities(JSON.parse(renderChangePayload(result)), 'change');
    }
    assert.ok(checked > 1000);
  });

  it('quantities above 2^53 survive rendering exactly', () => {
    const burns = results.map((r) => JSON.parse(renderBlock(r.block).toString('utf8')).executionEthBurnedWei as string);
    const large = burns.filter((burn) => BigInt(burn) > BigInt(Number.MAX_SAFE_INTEGER));
    assert.ok(large.length > 0);
    for (const burn of large) assert.equal(BigInt(burn).toString(), burn);
  });

  it('rendered properties follow the spec tables, whatever order the input object had', () => {
    const result = results.find((r) => r.transactions.length > 0)!;
    const reversed = Object.fromEntries(Object.entries(result.block).reverse()) as unknown as BlobsBlock;
    assert.deepEqual(Object.keys(JSON.parse(renderBlock(reversed).toString('utf8'))), SPEC_BLOCK_FIELDS);
    assert.deepEqual(renderBlock(reversed), renderBlock(result.block));
    assert.deepEqual(Object.keys(JSON.parse(renderTransaction(result.transactions[0]!).toString('utf8'))), SPEC_TRANSACTION_FIELDS);
    const row = scheduleRows(MAINNET_SCHEDULE, { hash: MAINNET_GENESIS_HASH, timestamp: MAINNET_GENESIS_TIMESTAMP }, 'chain_spec')[0]!;
    assert.deepEqual(Object.keys(JSON.parse(renderScheduleRow(row).toString('utf8'))), SPEC_SCHEDULE_FIELDS);
  });

  it('the change payload is exactly {block, transactions}: transaction indexes stay internal', () => {
    const result = results.find((r) => r.transactions.length > 1)!;
    const payload = JSON.parse(renderChangePayload(result));
    assert.deepEqual(Object.keys(payload), ['block', 'transactions']);
    assert.deepEqual(payload.block, JSON.parse(renderBlock(result.block).toString('utf8')));
    assert.deepEqual(payload.transactions, result.transactions.map((tx) => JSON.parse(renderTransaction(tx).toString('utf8'))));
  });

  it('withFinality splices every finality into every other, byte-equal to a fresh render', () => {
    for (const result of results.slice(0, 10)) {
      for (const from of FINALITIES) {
        const rendered = renderBlock({ ...result.block, finality: from });
        for (const to of FINALITIES) assert.deepEqual(withFinality(rendered, to), renderBlock({ ...result.block, finality: to }));
      }
    }
  });

  it('withFinality is not fooled by a network name that looks like the finality tail', () => {
    const block = { ...results[0]!.block, network: 'x","finality":"preview"}' };
    const updated = withFinality(renderBlock({ ...block, finality: 'preview' }), 'finalized');
    assert.deepEqual(JSON.parse(updated.toString('utf8')), { ...JSON.parse(renderBlock(block).toString('utf8')), finality: 'finalized' });
    assert.equal(JSON.parse(updated.toString('utf8')).network, block.network);
  });

  it('withFinality re-serializes bytes it did not render itself, keeping property order', () => {
    const block = results[0]!.block;
    const pretty = Buffer.from(JSON.stringify({ ...block, finality: 'preview' }, null, 2), 'utf8');
    assert.deepEqual(withFinality(pretty, 'included'), renderBlock({ ...block, finality: 'included' }));
    assert.throws(() => withFinality(Buffer.from('[1,2]'), 'included'), TypeError);
  });

  it('blockRowFields reads number, hash, timestamp and finality from every rendered block, equal to a full parse', () => {
    const parsed = (row: Buffer) => {
      const { blockNumber, blockHash, timestamp, finality } = JSON.parse(row.toString('utf8')) as BlobsBlock;
      return { blockNumber, blockHash, timestamp, finality };
    };
    for (const result of results) {
      for (const finality of FINALITIES) {
        const row = renderBlock({ ...result.block, finality });
        assert.deepEqual(blockRowFields(row), parsed(row));
      }
    }
  });

  it('blockRowFields is not fooled by a network name holding the property boundaries, and parses rows of another shape', () => {
    const block = results[0]!.block;
    const tricky = renderBlock({ ...block, network: 'x","blockNumber":7,"blockHash":"0x' + 'ab'.repeat(32) + '","timestamp":9,"finality":"preview"}' });
    assert.deepEqual(blockRowFields(tricky), { blockNumber: block.blockNumber, blockHash: block.blockHash, timestamp: block.timestamp, finality: block.finality });
    const pretty = Buffer.from(JSON.stringify({ ...block, finality: 'included' }, null, 2), 'utf8');
    assert.deepEqual(blockRowFields(pretty), { blockNumber: block.blockNumber, blockHash: block.blockHash, timestamp: block.timestamp, finality: 'included' });
  });

  it('block keys sort by block number under Buffer.compare', () => {
    const numbers = [0, 1, 9, 10, 255, 256, 65_535, 65_536, 19_426_587, 22_431_084, 2 ** 32, 2 ** 40 + 3, Number.MAX_SAFE_INTEGER];
    const shuffled = [...numbers].reverse().map(blockKey).sort(Buffer.compare);
    assert.deepEqual(shuffled.map(blockNumberOfKey), numbers);
    assert.equal(blockKey(1).length, 9);
    assert.equal(blockKey(1)[0], 'b'.charCodeAt(0));
  });

  it('index keys sort by (block number, transaction index) and a block prefix bounds exactly its entries', () => {
    const pairs: [number, number][] = [[7, 0], [7, 1], [7, 255], [7, 256], [7, 2 ** 32 - 1], [8, 0], [256, 3], [2 ** 33, 0]];
    const sorted = [...pairs].reverse().map(([n, i]) => blockTxIndexKey(n, i)).sort(Buffer.compare);
    assert.deepEqual(sorted, pairs.map(([n, i]) => blockTxIndexKey(n, i)));
    const prefix = blockTxIndexPrefix(7);
    assert.deepEqual(sorted.filter((key) => key.subarray(0, prefix.length).equals(prefix)).length, 5);
    assert.equal(blockTxIndexKey(7, 0).length, 13);
    assert.throws(() => blockTxIndexKey(7, 2 ** 32), RangeError);
  });

  it('transaction and schedule keys: prefix byte plus hash, or activation timestamp then name', () => {
    const hash = `0x${'ab'.repeat(32)}`;
    assert.deepEqual(txKey(hash), Buffer.concat([Buffer.from('t'), Buffer.from('ab'.repeat(32), 'hex')]));
    assert.ok(Buffer.compare(scheduleKey(1_710_338_135, 'cancun'), scheduleKey(1_746_612_311, 'prague')) < 0);
    const prefixes = new Set([blockKey(1), txKey(hash), blockTxIndexKey(1, 0), scheduleKey(1, 'cancun')].map((key) => key[0]));
    assert.equal(prefixes.size, 4);
  });

  it('blockEntries writes the block, each blob transaction, and its index entry holding the hash', () => {
    const result = results.find((r) => r.transactions.length > 1)!;
    const entries = blockEntries(result);
    assert.equal(entries.length, 1 + 2 * result.transactions.length);
    assert.deepEqual(entries[0], { key: blockKey(result.block.blockNumber), value: renderBlock(result.block) });
    for (const [row, tx] of result.transactions.entries()) {
      assert.deepEqual(entries[1 + 2 * row], { key: txKey(tx.txHash), value: renderTransaction(tx) });
      const index = entries[2 + 2 * row]!;
      assert.deepEqual(index.key, blockTxIndexKey(result.block.blockNumber, result.transactionIndexes[row]!));
      assert.equal(`0x${index.value.toString('hex')}`, tx.txHash);
    }
  });
});
