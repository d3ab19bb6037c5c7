import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getBlockNumber, getBodyBytes, getHeaderBytes, getReceiptsBytes, materialKey, recordBlocks, type BlockMaterial } from '../../store/chain-material.js';
import { dbVerify } from '../../store/commands.js';
import { openStore } from '../../store/store.js';
import { encodeJournalMove } from '../../store/journal.js';
import { hashKey, readU64, u64Key } from '../../store/keys.js';
import { tempDir } from './helpers/temp-dir.js';

function block(number: number, fill: number, receipts = true): BlockMaterial {
  return {
    number,
    hash: Buffer.alloc(32, fill),
    header: Buffer.from(`header ${number}/${fill}`),
    body: Buffer.from(`body ${number}/${fill}`),
    receipts: receipts ? Buffer.from(`receipts ${number}/${fill}`) : null,
  };
}

test('block material is keyed block number ‖ block hash, so blocks written in order go to the tables\' right edge', async (t) => {
  const store = openStore({ dataDir: tempDir(t), chainId: 1 });
  try {
    // Hashes in the reverse of the blocks' order: with hash keys the later block would sort first.
    await recordBlocks(store, [block(7, 0xf0), block(8, 0x0f), block(9, 0x80)]);
    for (const table of [store.chain.headers, store.chain.bodies, store.chain.receipts]) {
      const keys = [...table.getKeys()] as Buffer[];
      assert.deepEqual(keys.map((key) => key.length), [40, 40, 40]);
      assert.deepEqual(keys.map((key) => Number(readU64(key))), [7, 8, 9], 'keys sort by block number');
      assert.ok(keys[0]!.subarray(8).equals(Buffer.alloc(32, 0xf0)), 'the hash completes the key');
    }
    assert.equal(getBlockNumber(store, Buffer.alloc(32, 0x0f)), 8, 'hash → number stays keyed by hash');
    assert.equal(store.chain.hashToNumber.getBinary(hashKey(Buffer.alloc(32, 0x0f)))?.length, 8);
  } finally {
    await store.close();
  }
});

test('material is read by hash alone (through hash → number) or with its number, and a wrong number reads nothing', async (t) => {
  const store = openStore({ dataDir: tempDir(t), chainId: 1 });
  try {
    await recordBlocks(store, [block(5, 0xaa), block(6, 0xbb, false)]);
    const hash = Buffer.alloc(32, 0xaa);
    assert.equal(getHeaderBytes(store, hash)?.toString(), 'header 5/170');
    assert.equal(getHeaderBytes(store, hash, 5)?.toString(), 'header 5/170');
    assert.equal(getBodyBytes(store, hash, 5)?.toString(), 'body 5/170');
    assert.equal(getReceiptsBytes(store, hash)?.toString(), 'receipts 5/170');
    assert.equal(getHeaderBytes(store, hash, 6), undefined, 'another height holds no such block');
    assert.equal(getReceiptsBytes(store, Buffer.alloc(32, 0xbb)), undefined, 'a block recorded without receipts has none');
    assert.equal(getHeaderBytes(store, Buffer.alloc(32, 0xcc)), undefined, 'an unknown hash reads nothing');
  } finally {
    await store.close();
  }
});

test('two blocks at one height (competing branches) are both kept', async (t) => {
  const store = openStore({ dataDir: tempDir(t), chainId: 1 });
  try {
    await recordBlocks(store, [block(3, 0x01), block(3, 0x02)]);
    assert.equal(getHeaderBytes(store, Buffer.alloc(32, 0x01))?.toString(), 'header 3/1');
    assert.equal(getHeaderBytes(store, Buffer.alloc(32, 0x02), 3)?.toString(), 'header 3/2');
    assert.equal(store.chain.headers.getKeysCount(), 2);
  } finally {
    await store.close();
  }
});

test('material a store of an earlier version keyed by hash alone stays readable beside newly written blocks', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir, chainId: 1 });
  try {
    const legacy = Buffer.alloc(32, 0x11);
    await store.write(() => {
      store.chain.headers.put(legacy, Buffer.from('old header'));
      store.chain.bodies.put(legacy, Buffer.from('old body'));
      store.chain.receipts.put(legacy, Buffer.from('old receipts'));
      store.chain.hashToNumber.put(legacy, u64Key(1));
      store.chain.canonical.put(u64Key(1), legacy);
      store.chain.journal.put(u64Key(1), encodeJournalMove({ op: 'apply', number: 1, hash: legacy }));
    });
    await recordBlocks(store, [block(2, 0x22)]);
    await store.write(() => {
      store.chain.canonical.put(u64Key(2), Buffer.alloc(32, 0x22));
      store.chain.journal.put(u64Key(2), encodeJournalMove({ op: 'apply', number: 2, hash: Buffer.alloc(32, 0x22) }));
    });
    assert.equal(getHeaderBytes(store, legacy)?.toString(), 'old header');
    assert.equal(getBodyBytes(store, legacy, 1)?.toString(), 'old body');
    assert.equal(getReceiptsBytes(store, legacy, 1)?.toString(), 'old receipts');
    assert.equal(getHeaderBytes(store, Buffer.alloc(32, 0x22))?.toString(), 'header 2/34');
  } finally {
    await store.close();
  }
  const report = await dbVerify(dataDir);
  const failed = report.checks.filter((check) => !check.ok);
  assert.deepEqual(failed, [], 'db verify accepts both key layouts');
  assert.ok(report.checks.some((check) => check.name === 'keys:chain.headers'), 'the headers table\'s keys are checked');
});

test('db verify names a material key of neither width', async (t) => {
  const dataDir = tempDir(t);
  const store = openStore({ dataDir, chainId: 1 });
  await store.write(() => store.chain.bodies.put(Buffer.alloc(33, 1), Buffer.from('odd')));
  await store.close();
  const report = await dbVerify(dataDir);
  const check = report.checks.find((entry) => entry.name === 'keys:chain.bodies');
  assert.equal(check?.ok, false);
  assert.match(check?.detail ?? '', /is 33 bytes, expected 40 or 32/);
});

test('the material key refuses a number that is not a block number', () => {
  assert.throws(() => materialKey(-1, Buffer.alloc(32)), RangeError);
  assert.throws(() => materialKey(1.5, Buffer.alloc(32)), RangeError);
  assert.throws(() => materialKey(1, Buffer.alloc(31)), RangeError);
});
