import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeU64Key, decodeU64KeyAsNumber, hashKey, readU64, u64Key } from '../../store/keys.js';
import { decodeJournalMove, encodeJournalMove, JOURNAL_MOVE_BYTES } from '../../store/journal.js';

test('u64 keys are 8 big-endian bytes that round-trip numbers and bigints', () => {
  assert.deepEqual([...u64Key(1)], [0, 0, 0, 0, 0, 0, 0, 1]);
  assert.deepEqual([...u64Key(0x0102030405060708n)], [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal(decodeU64Key(u64Key((1n << 64n) - 1n)), (1n << 64n) - 1n);
  assert.equal(decodeU64KeyAsNumber(u64Key(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER);
  assert.equal(readU64(Buffer.concat([Buffer.from([9]), u64Key(77n)]), 1), 77n);
});

test('u64 keys sort bytewise in numeric order', () => {
  const numbers = [0n, 1n, 255n, 256n, 65_535n, 1n << 32n, (1n << 63n) + 5n, (1n << 64n) - 1n];
  const sorted = numbers.map((n) => u64Key(n)).sort(Buffer.compare).map((key) => decodeU64Key(key));
  assert.deepEqual(sorted, numbers);
});

test('u64 keys refuse values outside 0..2^64-1 and unsafe numbers', () => {
  assert.throws(() => u64Key(-1), RangeError);
  assert.throws(() => u64Key(-1n), RangeError);
  assert.throws(() => u64Key(1n << 64n), RangeError);
  assert.throws(() => u64Key(1.5), RangeError);
  assert.throws(() => u64Key(2 ** 53), RangeError);
  assert.throws(() => decodeU64Key(Buffer.alloc(7)), RangeError);
  assert.throws(() => decodeU64KeyAsNumber(u64Key(1n << 53n)), RangeError);
});

test('hash keys accept 32 bytes or 0x hex and refuse anything else', () => {
  const hex = `0x${'ab'.repeat(32)}` as const;
  assert.deepEqual(hashKey(hex), Buffer.alloc(32, 0xab));
  assert.deepEqual(hashKey(new Uint8Array(32).fill(0xab)), Buffer.alloc(32, 0xab));
  assert.throws(() => hashKey('ab'.repeat(32)), RangeError);
  assert.throws(() => hashKey(new Uint8Array(31)), RangeError);
});

test('journal moves round-trip in 41 bytes and refuse unknown ops', () => {
  const hash = new Uint8Array(32).fill(7);
  for (const op of ['apply', 'undo', 'finalize'] as const) {
    const encoded = encodeJournalMove({ op, number: 19_000_000, hash });
    assert.equal(encoded.length, JOURNAL_MOVE_BYTES);
    const decoded = decodeJournalMove(encoded);
    assert.equal(decoded.op, op);
    assert.equal(decoded.number, 19_000_000);
    assert.deepEqual([...decoded.hash], [...hash]);
  }
  const bad = encodeJournalMove({ op: 'apply', number: 1, hash });
  bad[0] = 9;
  assert.throws(() => decodeJournalMove(bad), /unknown journal op/);
  assert.throws(() => decodeJournalMove(bad.subarray(0, 40)), RangeError);
});
