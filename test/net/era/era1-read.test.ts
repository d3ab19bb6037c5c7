/**
 * The real mainnet Era1 file of epoch 0 (../shared/fixtures/era1, blocks 0-8191) read and verified by net/era: its
 * index and stated accumulator root, every header linked and every total difficulty checked, the accumulator root
 * recomputed equal to the file's and to mainnet's shipped epoch 0 root, block 0 hashing to mainnet's genesis hash,
 * and every block's body (uncles included) and empty receipts checked against its header; blocks past the merge and
 * epochs the archive has no file for are refused naming the block.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { bytesToHex } from '../../../net/eth/hex.js';
import { decodeHeader } from '../../../net/eth/header.js';
import { Era1File } from '../../../net/era/era1-file.js';
import { verifyEpochHeaders } from '../../../net/era/era1-verify.js';
import { createEra1Archive } from '../../../net/era/era1-archive.js';
import { createEra1History } from '../../../net/era/era1-history.js';
import { mainnetEpochRoots } from '../../../net/era/mainnet-epoch-roots.js';
import { decodeSnappyFramed } from '../../../net/era/snappy-framed.js';
import { HistoryBlockError } from '../../../net/history/history-block.js';
import { EPOCH0_ROOT, ERA1_DIR, ERA1_NAME, ERA1_PATH, GENESIS_HASH } from './era1-copies.js';

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => { await Promise.all(opened.splice(0).map((history) => history.close())); });

function fixtureHistory() {
  const history = createEra1History({ archive: createEra1Archive({ path: ERA1_DIR }), epochRoots: mainnetEpochRoots(), concurrency: 2 });
  opened.push(history);
  return history;
}

test('the fixture\'s index and accumulator entry: blocks 0-8191, stated root 0x5ec1ffb8…', async () => {
  const file = await Era1File.open(ERA1_PATH, ERA1_NAME);
  try {
    assert.deepEqual([file.startBlock, file.count, file.endBlock], [0, 8192, 8191]);
    assert.equal(bytesToHex(file.accumulatorRoot), EPOCH0_ROOT);
    const [genesis, one] = await file.readTuples(0, 1);
    assert.equal(genesis!.totalDifficulty, 17_179_869_184n, 'the genesis total difficulty is its difficulty, 2^34');
    assert.equal(decodeHeader(decodeSnappyFramed(one!.header)).number, 1);
  } finally {
    await file.close();
  }
});

test('the header pass links all 8192 headers, checks every total difficulty and recomputes the accumulator root equal to the file\'s and mainnet\'s epoch 0 root', async () => {
  const file = await Era1File.open(ERA1_PATH, ERA1_NAME);
  try {
    const epoch = await verifyEpochHeaders(file, mainnetEpochRoots(), 0);
    assert.equal(epoch.root, EPOCH0_ROOT);
    assert.equal(epoch.hashes[0], GENESIS_HASH, "block 0 is mainnet's genesis");
    assert.equal(epoch.hashes.length, 8192);
    assert.equal(epoch.parentHashes[1], GENESIS_HASH);
    assert.equal(epoch.hashes[1], '0x88e96d4537bea4d9c05d12549907b32561d3bf31f45aae734cdc119f13406cb6', "mainnet's block 1");
  } finally {
    await file.close();
  }
});

test('every block of the file is served verified: hashes chained, bodies with uncles and the empty receipts checked against the headers', async () => {
  const history = fixtureHistory();
  const range = await history.range();
  assert.deepEqual(range, { earliestBlock: 0, latestBlock: 8191, files: 1, missingEpochs: [] });
  const blocks = await history.fetchRange(0, 8191);
  assert.equal(blocks.length, 8192);
  assert.equal(blocks[0]!.hash, GENESIS_HASH);
  blocks.forEach((block, i) => {
    assert.equal(block.number, i);
    if (i > 0) assert.equal(block.parentHash, blocks[i - 1]!.hash, `block ${i} links to block ${i - 1}`);
    assert.equal(bytesToHex(block.material.hash), block.hash);
  });
  assert.ok(blocks.filter((block) => block.material.body.length > 3).length > 1000, 'the epoch has over a thousand blocks with uncles, each uncles hash checked');
  assert.ok(blocks.every((block) => block.material.receipts !== null && bytesToHex(block.material.receipts) === '0xc0'), 'no transactions, so every receipt list is empty (and checked against the receipts root)');
  const headers = await history.fetchHeaders(8000, 8191);
  assert.deepEqual(headers.map((link) => link.hash), blocks.slice(8000).map((block) => block.hash));
  assert.deepEqual(await history.canonicalLink(5), { number: 5, hash: blocks[5]!.hash, parentHash: blocks[4]!.hash });
});

test('blocks past the merge and epochs without a file are refused naming the block', async () => {
  const history = fixtureHistory();
  await assert.rejects(history.fetchRange(15_537_390, 15_537_400), (error: unknown) => {
    assert.ok(error instanceof HistoryBlockError);
    assert.equal(error.blockNumber, 15_537_394);
    assert.match(error.message, /^block 15537394: past the merge: Era1 files hold the pre-merge chain only: blocks 0 to 15537393/);
    return true;
  });
  await assert.rejects(history.fetchRange(9000, 9001), /^HistoryBlockError: block 9000: the Era1 archive .* has no file for epoch 1 \(blocks 8192-16383\)$/);
});
