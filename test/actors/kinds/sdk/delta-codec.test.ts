import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeDeltas, encodeDeltas } from '../../../../actors/kinds/sdk/delta-codec.js';

test('map output round-trips through its canonical bytes: bigints (256-bit and negative), maps in insertion order, bytes, $-keyed objects', () => {
  const deltas = {
    balances: new Map<string, bigint>([['0xbb', -(1n << 255n)], ['0xaa', (1n << 256n) - 1n]]),
    raw: Buffer.from('00ff', 'hex'),
    events: [{ type: 'v2.sync', reserve0: 5n, tick: -3 }, null, true, 'x'],
    odd: { $bigint: 'not a tag', plain: 1 },
  };
  const bytes = encodeDeltas(deltas);
  assert.deepEqual(decodeDeltas(bytes), deltas);
  assert.deepEqual([...(decodeDeltas<typeof deltas>(bytes).balances.keys())], ['0xbb', '0xaa'], 'insertion order kept');
  assert.ok(encodeDeltas(decodeDeltas(bytes)).equals(bytes), 'the bytes are canonical: decode then encode gives them back');
  assert.doesNotThrow(() => JSON.parse(bytes.toString('utf8')), 'the payload is JSON');
});

test('values an artifact cannot hold are refused naming where they are', () => {
  assert.throws(() => encodeDeltas({ a: [1, Number.NaN] }), /deltas\.a\[1\] is NaN/);
  assert.throws(() => encodeDeltas({ f: () => 1 }), /deltas\.f is a function/);
});
