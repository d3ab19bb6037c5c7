/** Hex primitives: bytesToHex against @noble/hashes' encoder on every length class, over subarrays too, and the round trip; the address and hash shapes. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bytesToHex as nobleHex } from '@noble/hashes/utils.js';
import { bytesToHex, hexToBytes, isAddressHex, isHashHex } from '../../../net/eth/hex.js';

describe('bytesToHex', () => {
  it('writes lower-case 0x-hex of exactly the given bytes, subarrays included, and hexToBytes reads it back', () => {
    for (const length of [0, 1, 2, 19, 20, 31, 32, 33, 55, 56, 255, 256, 4097]) {
      const backing = new Uint8Array(length + 7);
      for (let i = 0; i < backing.length; i++) backing[i] = (i * 167 + length) & 0xff;
      const bytes = backing.subarray(3, 3 + length);
      const hex = bytesToHex(bytes);
      assert.equal(hex, `0x${nobleHex(bytes)}`, `length ${length}`);
      assert.deepEqual(hexToBytes(hex), bytes);
    }
  });
});

describe('isAddressHex and isHashHex', () => {
  it('take 0x and exactly 20 or 32 bytes of hex digits of either case, and nothing else', () => {
    assert.ok(isAddressHex(`0x${'aB'.repeat(20)}`));
    assert.ok(isHashHex(`0x${'Cd'.repeat(32)}`));
    for (const value of [`0x${'ab'.repeat(19)}`, `0x${'ab'.repeat(21)}`, `0X${'ab'.repeat(20)}`, `${'ab'.repeat(21)}`, `0x${'ag'.repeat(20)}`, `0x${'ab'.repeat(20)}\n`]) {
      assert.equal(isAddressHex(value), false, JSON.stringify(value));
    }
    assert.equal(isHashHex(`0x${'ab'.repeat(20)}`), false);
    assert.equal(isAddressHex(`0x${'ab'.repeat(32)}`), false);
  });
});
