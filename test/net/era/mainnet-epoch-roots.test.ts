/**
 * The mainnet epoch accumulator roots the node ships (net/era/mainnet-epoch-roots.txt): 1,897 of them (epochs 0 to
 * 1896, the last ending at block 15537393), the header naming their origin; their accumulator's hash_tree_root is
 * the one EIP-7643 states, and epoch 0's root is the Era1 fixture's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ByteVectorType, ContainerType, ListCompositeType } from '@chainsafe/ssz';
import { bytesToHex } from '../../../net/eth/hex.js';
import { EPOCH_BLOCKS, epochAccumulatorRoot, EpochRecordType } from '../../../net/era/accumulator.js';
import { Era1File } from '../../../net/era/era1-file.js';
import { MAINNET_EPOCH_ROOTS_PATH, MAINNET_LAST_PRE_MERGE_BLOCK, mainnetEpochRoots } from '../../../net/era/mainnet-epoch-roots.js';
import { EPOCH0_ROOT, ERA1_NAME, ERA1_PATH } from './era1-copies.js';

/** EIP-7643 (ethereum/EIPs, EIPS/eip-7643.md): the hash_tree_root of the pre-PoS HistoricalHashesAccumulator. */
const EIP_7643_ROOT = '0xec8e040fd6c557b41ca8ddd38f7e9d58a9281918dc92bdb72342a38fb085e701';

test('the shipped list holds 1,897 roots, one per pre-merge epoch, and names its origin', () => {
  const roots = mainnetEpochRoots();
  assert.equal(roots.length, 1897);
  assert.equal(roots.length, Math.floor(MAINNET_LAST_PRE_MERGE_BLOCK / EPOCH_BLOCKS) + 1);
  assert.equal(new Set(roots).size, roots.length);
  const header = readFileSync(MAINNET_EPOCH_ROOTS_PATH, 'utf8').split('\n').filter((line) => line.startsWith('#')).join('\n');
  assert.match(header, /ethereum\/portal-spec-tests/);
  assert.match(header, /tests\/mainnet\/history\/accumulator\/historical_hashes_accumulator\.ssz/);
  assert.match(header, /a5c43acf200bbd0050bb27fe78404f8e0953ae37/);
});

test('the roots\' accumulator (historical_epochs: List[Bytes32, 2048], current_epoch empty) has EIP-7643\'s root', () => {
  const accumulator = new ContainerType({
    historicalEpochs: new ListCompositeType(new ByteVectorType(32), 2048),
    currentEpoch: EpochRecordType,
  });
  const roots = mainnetEpochRoots().map((root) => Buffer.from(root.slice(2), 'hex'));
  assert.equal(bytesToHex(accumulator.hashTreeRoot({ historicalEpochs: roots, currentEpoch: [] })), EIP_7643_ROOT);
});

test('epoch 0\'s shipped root is the Era1 fixture\'s accumulator root, and the one its file name carries', async () => {
  assert.equal(mainnetEpochRoots()[0], EPOCH0_ROOT);
  const file = await Era1File.open(ERA1_PATH, ERA1_NAME);
  try {
    assert.equal(bytesToHex(file.accumulatorRoot), mainnetEpochRoots()[0]);
  } finally {
    await file.close();
  }
  assert.equal(ERA1_NAME.split('-')[2]!.replace('.era1', ''), mainnetEpochRoots()[0]!.slice(2, 10));
});

test('the accumulator root computed with SHA-256 directly equals @chainsafe/ssz\'s hash_tree_root of the same records (full, partial and empty epochs)', () => {
  const records = (count: number) => Array.from({ length: count }, (_, i) => ({
    blockHash: Uint8Array.from({ length: 32 }, (_, j) => (i * 31 + j * 7) & 0xff),
    totalDifficulty: (BigInt(i) + 1n) * 17_179_869_184n + (i % 3 === 0 ? 2n ** 200n : 0n),
  }));
  for (const count of [EPOCH_BLOCKS, 5362, 1, 0]) {
    const sample = records(count);
    assert.equal(bytesToHex(epochAccumulatorRoot(sample)), bytesToHex(EpochRecordType.hashTreeRoot(sample)), `${count} records`);
  }
});
