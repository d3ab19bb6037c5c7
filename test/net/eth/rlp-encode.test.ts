import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RLP } from '@ethereumjs/rlp';
import { decodeRlp, encodeRlp, type RlpInput } from '../../../net/eth/rlp.js';

/** A deterministic generator (xorshift32), so a failure names a reproducible case. */
function generator(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

/** Byte strings around every length boundary (0, 1 with values below and above 0x80, 55/56, 255/256, 64 KiB). */
const LENGTHS = [0, 1, 1, 2, 31, 32, 55, 56, 57, 255, 256, 1024, 65_535, 65_536];

function randomItem(random: () => number, depth: number): RlpInput {
  const pick = random();
  if (depth < 4 && pick < 0.3) {
    const count = Math.floor(random() * (random() < 0.1 ? 80 : 6));
    return Array.from({ length: count }, () => randomItem(random, depth + 1));
  }
  if (pick < 0.55) {
    // bigints: 0, below 0x80, at the boundaries, and up to 2^256 - 1.
    const kind = Math.floor(random() * 5);
    if (kind === 0) return 0n;
    if (kind === 1) return BigInt(Math.floor(random() * 0x80));
    if (kind === 2) return [0x7fn, 0x80n, 0xffn, 0x100n][Math.floor(random() * 4)]!;
    const bytes = 1 + Math.floor(random() * 32);
    let value = 0n;
    for (let i = 0; i < bytes; i += 1) value = (value << 8n) | BigInt(Math.floor(random() * 256));
    return value;
  }
  const length = LENGTHS[Math.floor(random() * LENGTHS.length)]!;
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i += 1) bytes[i] = Math.floor(random() * 256);
  return bytes;
}

test('encodeRlp writes exactly what @ethereumjs/rlp writes, on 3,000 random nested inputs at every length boundary', () => {
  const random = generator(0x5eed);
  for (let i = 0; i < 3_000; i += 1) {
    const input = randomItem(random, 0);
    const ours = encodeRlp(input);
    const theirs = RLP.encode(input as Parameters<typeof RLP.encode>[0]);
    assert.deepEqual(Buffer.from(ours), Buffer.from(theirs), `case ${i}`);
    decodeRlp(ours, `case ${i}`);
  }
});

test('encodeRlp: single bytes below 0x80 stand alone, 0n is the empty string, long lists get a length of length', () => {
  assert.deepEqual([...encodeRlp(Uint8Array.of(0x7f))], [0x7f]);
  assert.deepEqual([...encodeRlp(Uint8Array.of(0x80))], [0x81, 0x80]);
  assert.deepEqual([...encodeRlp(0n)], [0x80]);
  assert.deepEqual([...encodeRlp(1024n)], [0x82, 0x04, 0x00]);
  assert.deepEqual([...encodeRlp([])], [0xc0]);
  assert.deepEqual([...encodeRlp([new Uint8Array(60)]).subarray(0, 4)], [0xf8, 62, 0xb8, 60]);
});

test('encodeRlp refuses negative integers and values it does not encode', () => {
  assert.throws(() => encodeRlp(-1n), RangeError);
  assert.throws(() => encodeRlp([-300n]), RangeError);
  assert.throws(() => encodeRlp(5 as unknown as RlpInput), TypeError);
  assert.throws(() => encodeRlp(['0x01' as unknown as RlpInput]), TypeError);
});
