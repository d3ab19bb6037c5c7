import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodePageToken, encodePageToken } from '../../../api/page-token.js';
import { CodedError } from '../../../runtime/errors.js';

const SCOPE = { epoch: 0x1122334455667788n, scope: 'blobs@1/blobs/blocks' };
const isInvalid = (error: unknown) => error instanceof CodedError && error.code === 'cursor_invalid';

test('a page token round-trips its flags and values and is base64url', () => {
  const token = encodePageToken(SCOPE, { flags: 3, values: [100, 129, 107] });
  assert.match(token, /^[A-Za-z0-9_-]+$/);
  assert.deepEqual(decodePageToken(token, SCOPE, 3), { flags: 3, values: [100, 129, 107] });
});

test('every single-bit change of a token is detected', () => {
  const bytes = Buffer.from(encodePageToken(SCOPE, { flags: 1, values: [5, 9, 6] }), 'base64url');
  for (let i = 0; i < bytes.length; i += 1) {
    for (let bit = 0; bit < 8; bit += 1) {
      const copy = Buffer.from(bytes);
      copy[i]! ^= 1 << bit;
      assert.throws(() => decodePageToken(copy.toString('base64url'), SCOPE, 3), isInvalid, `byte ${i} bit ${bit}`);
    }
  }
});

test('a token of another store epoch, scope or shape is refused with cursor_invalid', () => {
  const token = encodePageToken(SCOPE, { flags: 0, values: [1, 2, 1] });
  assert.throws(() => decodePageToken(token, { ...SCOPE, epoch: 1n }, 3), isInvalid);
  assert.throws(() => decodePageToken(token, { ...SCOPE, scope: 'other@1/blobs/blocks' }, 3), isInvalid);
  assert.throws(() => decodePageToken(token, SCOPE, 2), isInvalid);
  for (const garbage of ['', 'a', '!!!!', 'x'.repeat(300), `${token}=`]) assert.throws(() => decodePageToken(garbage, SCOPE, 3), isInvalid, garbage);
});
