/**
 * The one-pass trie builder against the reference implementation (`@ethereumjs/mpt`, insert by insert): random
 * lists across the key-length boundaries of `rlp(index)` with value sizes that make embedded nodes, and random
 * sorted byte keys where one key may be a prefix of another (a value held by a branch).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMPT } from '@ethereumjs/mpt';
import { bytesToHex, type Hash } from '../../../net/eth/hex.js';
import { sortedTrieRoot, type TrieEntry } from '../../../net/eth/ordered-trie.js';
import { encodeRlp } from '../../../net/eth/rlp.js';
import { orderedTrieRoot } from '../../../net/eth/trie-root.js';

/** Deterministic xorshift32, so a failure reproduces. */
function random(seed: number): (bound: number) => number {
  let state = seed >>> 0 || 1;
  return (bound) => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state % bound;
  };
}

function randomBytes(next: (bound: number) => number, length: number): Uint8Array {
  return Uint8Array.from({ length }, () => next(256));
}

async function referenceRoot(entries: readonly TrieEntry[]): Promise<Hash> {
  const trie = await createMPT();
  await trie.batch(entries.map(({ key, value }) => ({ type: 'put' as const, key, value })));
  return bytesToHex(trie.root());
}

const indexEntries = (values: readonly Uint8Array[]): TrieEntry[] => values.map((value, index) => ({ key: encodeRlp(BigInt(index)), value }));

/** Value sizes: tiny ones make leaves under 32 bytes (embedded in their branch); large ones need long RLP lengths. */
const VALUE_SIZES: ReadonlyArray<[string, number, number]> = [['1 byte', 1, 1], ['1-24 bytes', 1, 24], ['1-600 bytes', 1, 600], ['30-70 bytes', 30, 70]];
const BOUNDARY_COUNTS = [0, 1, 2, 3, 15, 16, 17, 127, 128, 129, 255, 256, 257, 600];

function randomList(next: (bound: number) => number, count: number, minSize: number, maxSize: number): Uint8Array[] {
  return Array.from({ length: count }, () => randomBytes(next, minSize + next(maxSize - minSize + 1)));
}

describe('ordered trie root equals the @ethereumjs/mpt reference', () => {
  for (const [label, minSize, maxSize] of VALUE_SIZES) {
    it(`lists of ${BOUNDARY_COUNTS.join(', ')} items with values of ${label}`, async () => {
      const next = random(minSize * 7919 + maxSize);
      for (const count of BOUNDARY_COUNTS) {
        const values = randomList(next, count, minSize, maxSize);
        assert.equal(await orderedTrieRoot(values), await referenceRoot(indexEntries(values)), `${count} items`);
      }
    });
  }

  it('60 lists of random length 0..600 with random value sizes', async () => {
    const next = random(20_251_122);
    for (let round = 0; round < 60; round++) {
      const count = next(601);
      const maxSize = 1 + next(round % 2 === 0 ? 40 : 400);
      const values = randomList(next, count, 1, maxSize);
      assert.equal(await orderedTrieRoot(values), await referenceRoot(indexEntries(values)), `round ${round}: ${count} items up to ${maxSize} bytes`);
    }
  });

  it('sorted arbitrary keys, some the prefix of others, give the same root', async () => {
    const next = random(4_844);
    for (let round = 0; round < 200; round++) {
      const byKey = new Map<Hash, TrieEntry>();
      const count = 1 + next(40);
      for (let i = 0; i < count; i++) {
        const key = Uint8Array.from({ length: 1 + next(4) }, () => [0x00, 0x01, 0x10, 0x11, 0xff][next(5)]!);
        byKey.set(bytesToHex(key), { key, value: randomBytes(next, 1 + next(round % 2 === 0 ? 8 : 80)) });
      }
      const entries = [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, entry]) => entry);
      assert.equal(bytesToHex(sortedTrieRoot(entries)), await referenceRoot(entries), `round ${round}`);
    }
  });
});
