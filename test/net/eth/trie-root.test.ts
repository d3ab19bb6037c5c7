import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bytesToHex } from '../../../net/eth/hex.js';
import { keccak256 } from '../../../net/eth/keccak.js';
import { sortedTrieRoot, UnsortedTrieKeysError } from '../../../net/eth/ordered-trie.js';
import { encodeRlp } from '../../../net/eth/rlp.js';
import { EMPTY_TRIE_ROOT } from '../../../net/eth/trie-root.js';

describe('sortedTrieRoot', () => {
  it('the empty trie root is the keccak of rlp("")', () => {
    assert.equal(bytesToHex(sortedTrieRoot([])), EMPTY_TRIE_ROOT);
  });

  it('hashes the root node even when its RLP is under 32 bytes', () => {
    const leaf = encodeRlp([Uint8Array.of(0x20, 0x80), Uint8Array.of(7)]);
    assert.ok(leaf.length < 32);
    assert.equal(bytesToHex(sortedTrieRoot([{ key: Uint8Array.of(0x80), value: Uint8Array.of(7) }])), bytesToHex(keccak256(leaf)));
  });

  it('refuses keys out of order and duplicate keys, naming the entry', () => {
    const value = Uint8Array.of(1);
    assert.throws(() => sortedTrieRoot([{ key: Uint8Array.of(2), value }, { key: Uint8Array.of(1), value }]), UnsortedTrieKeysError);
    assert.throws(() => sortedTrieRoot([{ key: Uint8Array.of(1), value }, { key: Uint8Array.of(1), value }]), /trie entry 1 /);
  });

  it('refuses an empty value, which a trie cannot hold', () => {
    assert.throws(() => sortedTrieRoot([{ key: Uint8Array.of(1), value: new Uint8Array(0) }]), /entry 0 has an empty value/);
  });
});
