/** Hex primitives: bytesToHex against @noble/hashes' encoder on every length class, over subarrays too, and the round trip. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bytesToHex as nobleHex } from '@noble/hashes/utils.js';
import { bytesToHex, hexToBytes } from '../../../net/eth/hex.js';

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
