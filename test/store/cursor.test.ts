import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { CodedError, type ErrorCode } from '../../runtime/errors.js';
import { decodeCursor, encodeCursor, type CursorFields } from '../../store/cursor.js';

const store = { epoch: 0x1234_5678_9abc_def0n, chainId: 1, instance: 'blobs-v1' };
const blockHash = `0x${'ab'.repeat(32)}` as const;
const withBlock: CursorFields = { ...store, sequence: 1042n, block: { number: 19_000_000, hash: blockHash } };
const withoutBlock: CursorFields = { ...store, sequence: 7n };

function rejects(token: string, code: ErrorCode, message: RegExp, expect = store): void {
  assert.throws(
    () => decodeCursor(token, expect),
    (error: unknown) => error instanceof CodedError && error.code === code && message.test(error.message),
    `expected ${code} matching ${message}`,
  );
}

/** Re-signs a raw cursor body with a valid checksum, to build sound cursors of other formats. */
function withChecksum(body: Buffer): string {
  const sum = createHash('sha256').update(body).digest().subarray(0, 4);
  return Buffer.concat([body, sum]).toString('base64url');
}

test('a cursor round-trips its sequence and block', () => {
  const decoded = decodeCursor(encodeCursor(withBlock), store);
  assert.deepEqual(decoded, { version: 1, ...store, sequence: 1042n, block: { number: 19_000_000, hash: blockHash } });
});

test('a cursor without a block round-trips without one', () => {
  const decoded = decodeCursor(encodeCursor(withoutBlock), store);
  assert.deepEqual(decoded, { version: 1, ...store, sequence: 7n });
});

test('a cursor takes the block hash as bytes or hex, and 64-bit sequences', () => {
  const fromBytes = encodeCursor({ ...withBlock, block: { number: 19_000_000, hash: Buffer.from(blockHash.slice(2), 'hex') } });
  assert.equal(fromBytes, encodeCursor(withBlock));
  const max = (1n << 64n) - 1n;
  assert.equal(decodeCursor(encodeCursor({ ...withoutBlock, sequence: max }), store).sequence, max);
});

test('consecutive cursors each carry their own fields, whatever was encoded before and even when the caller reuses its hash bytes', () => {
  const hashBytes = Buffer.from(blockHash.slice(2), 'hex');
  const other = { epoch: 9n, chainId: 5, instance: 'erc20-v1' };
  const cases: Array<[CursorFields, ReturnType<typeof decodeCursor>, typeof store]> = [];
  const add = (fields: CursorFields, expect: typeof store) => cases.push([fields, decodeCursor(encodeCursor(fields), expect), expect]);
  add({ ...store, sequence: 1n, block: { number: 5, hash: hashBytes } }, store);
  hashBytes[0] = 0x01; // the same array, another block hash
  add({ ...store, sequence: 2n, block: { number: 5, hash: hashBytes } }, store);
  add({ ...store, sequence: 3n, block: { number: 6, hash: hashBytes } }, store);
  add({ ...store, sequence: 4n }, store);
  add({ ...other, sequence: 5n, block: { number: 6, hash: hashBytes } }, other);
  add({ ...other, chainId: 6, sequence: 6n, block: { number: 6, hash: hashBytes } }, { ...other, chainId: 6 });
  add({ ...store, sequence: 7n, block: { number: 6, hash: blockHash } }, store);
  const hashes = [`0x${'ab'.repeat(32)}`, `0x01${'ab'.repeat(31)}`, `0x01${'ab'.repeat(31)}`, undefined, `0x01${'ab'.repeat(31)}`, `0x01${'ab'.repeat(31)}`, blockHash];
  cases.forEach(([fields, decoded, expect], i) => {
    assert.deepEqual(decoded, { version: 1, ...expect, sequence: fields.sequence, ...(fields.block ? { block: { number: fields.block.number, hash: hashes[i] } } : {}) }, `cursor ${i + 1}`);
  });
});

test('a cursor is opaque url-safe base64 without padding', () => {
  for (const token of [encodeCursor(withBlock), encodeCursor(withoutBlock)]) assert.match(token, /^[A-Za-z0-9_-]+$/);
  assert.equal(encodeCursor(withoutBlock).length, 51);
  assert.equal(encodeCursor(withBlock).length, 104);
});

test('a token that is not base64url, is empty, too short or too long is cursor_invalid', () => {
  rejects('', 'cursor_invalid', /not a base64url token/);
  rejects('abc$def', 'cursor_invalid', /not a base64url token/);
  rejects('aGVsbG8gd29ybGQ=', 'cursor_invalid', /not a base64url token/);
  rejects('AAAA', 'cursor_invalid', /too short/);
  rejects('A'.repeat(10_000), 'cursor_invalid', /not a base64url token/);
  rejects('hello-world-this-is-not-a-cursor', 'cursor_invalid', /corrupted/);
});

test('a checksum mismatch is cursor_invalid and says the cursor is corrupted', () => {
  const bytes = Buffer.from(encodeCursor(withBlock), 'base64url');
  bytes[30] = (bytes[30] ?? 0) ^ 0x01;
  rejects(bytes.toString('base64url'), 'cursor_invalid', /corrupted/);
});

test('flipping any single character of a cursor is detected', () => {
  for (const fields of [withBlock, withoutBlock]) {
    const token = encodeCursor(fields);
    for (let i = 0; i < token.length; i++) {
      for (const replacement of ['A', 'g', '_', '9']) {
        if (token[i] === replacement) continue;
        const flipped = token.slice(0, i) + replacement + token.slice(i + 1);
        assert.throws(
          () => decodeCursor(flipped, store),
          (error: unknown) => error instanceof CodedError && error.code === 'cursor_invalid',
          `flip at ${i} to ${replacement} went undetected`,
        );
      }
    }
  }
});

test('a sound cursor of an unknown format version is reset_required (incompatible cursor format)', () => {
  const body = Buffer.from(encodeCursor(withoutBlock), 'base64url').subarray(0, -4);
  body[0] = 2;
  rejects(withChecksum(body), 'reset_required', /incompatible cursor format/);
  rejects(withChecksum(Buffer.from([7, 0, 1, 2, 3])), 'reset_required', /incompatible cursor format/);
});

test('a version-1 cursor with unknown flags or the wrong length is cursor_invalid', () => {
  const body = Buffer.from(encodeCursor(withoutBlock), 'base64url').subarray(0, -4);
  body[1] = 0x02;
  rejects(withChecksum(body), 'cursor_invalid', /malformed/);
  const truncated = Buffer.from(encodeCursor(withBlock), 'base64url').subarray(0, 60);
  rejects(withChecksum(truncated), 'cursor_invalid', /malformed/);
});

test('a cursor from another store epoch is reset_required', () => {
  rejects(encodeCursor(withBlock), 'reset_required', /another store epoch/, { ...store, epoch: store.epoch + 1n });
});

test('a cursor from another chain is reset_required', () => {
  rejects(encodeCursor(withBlock), 'reset_required', /chain 1, this node serves chain 17000/, { ...store, chainId: 17_000 });
});

test('a cursor from another processor instance is reset_required', () => {
  rejects(encodeCursor(withBlock), 'reset_required', /another processor instance/, { ...store, instance: 'blobs-v2' });
});

test('error details carry at most a short prefix of the token', () => {
  const token = encodeCursor(withBlock);
  const cases: Array<[string, typeof store]> = [
    [`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, store],
    [token, { ...store, epoch: 1n }],
    [token, { ...store, chainId: 2 }],
    [token, { ...store, instance: 'other' }],
  ];
  for (const [candidate, expect] of cases) {
    try {
      decodeCursor(candidate, expect);
      assert.fail('expected a rejection');
    } catch (error) {
      assert.ok(error instanceof CodedError);
      const serialized = JSON.stringify(error.details) + error.message;
      assert.ok(!serialized.includes(candidate.slice(0, 12)), 'details must not echo more than a short prefix');
      assert.equal(error.details?.['cursorPrefix'], `${candidate.slice(0, 8)}…`);
    }
  }
});

test('encoding refuses values that do not fit the format', () => {
  assert.throws(() => encodeCursor({ ...withoutBlock, sequence: -1n }), RangeError);
  assert.throws(() => encodeCursor({ ...withoutBlock, epoch: 1n << 64n }), RangeError);
  assert.throws(() => encodeCursor({ ...withBlock, block: { number: 1, hash: '0x1234' } }), RangeError);
  assert.throws(() => encodeCursor({ ...withBlock, block: { number: -1, hash: blockHash } }), RangeError);
});
