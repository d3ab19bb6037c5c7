/**
 * The snappy the node sends eth messages with (`net/p2p/snappy.ts`): whatever it writes, devp2p's own decoder
 * (snappyjs, which reads every message the node receives) reads back byte for byte, and the native decoder reads
 * what snappyjs writes, over RLP-like and random payloads up to a few MB. On this machine the native package loads.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import * as snappyjs from 'snappyjs';
import { compress, nativeUncompress, SNAPPY_IMPLEMENTATION, uncompress } from '../../../net/p2p/snappy.js';

function payloads(): Uint8Array[] {
  const repetitive = new Uint8Array(3 << 20);
  for (let i = 0; i < repetitive.length; i += 97) repetitive.set(randomBytes(Math.min(20, repetitive.length - i)), i);
  return [new Uint8Array(0), Uint8Array.of(0xc0), randomBytes(1), randomBytes(70_000), repetitive];
}

describe('snappy for eth messages', () => {
  it('uses the native implementation on this machine', () => {
    assert.equal(SNAPPY_IMPLEMENTATION, 'native');
  });

  it('what the node compresses, devp2p\'s decoder reads back byte for byte', () => {
    for (const payload of payloads()) {
      const compressed = compress(payload);
      assert.deepEqual(Buffer.from(uncompress(compressed)), Buffer.from(payload));
    }
  });

  it('compresses repetitive material', () => {
    const repetitive = payloads().at(-1)!;
    assert.ok(compress(repetitive).length < repetitive.length / 2);
  });

  it('the native decoder reads what snappyjs writes', () => {
    for (const payload of payloads()) {
      const decoded = nativeUncompress(snappyjs.compress(payload));
      assert.ok(decoded);
      assert.deepEqual(Buffer.from(decoded), Buffer.from(payload));
    }
  });
});
