import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bloomMayContain, combineBlooms, EMPTY_BLOOM, logsBloom } from '../../../net/eth/bloom.js';
import { RlpDecodeError, UnsupportedTransactionTypeError } from '../../../net/eth/errors.js';
import { bytesToHex, concatBytes, hexToBytes, type Hex } from '../../../net/eth/hex.js';
import { keccak256Hex } from '../../../net/eth/keccak.js';
import type { Log } from '../../../net/eth/log.js';
import { decodeEth69Receipts, decodeReceipt, encodeEth69Receipts, encodeReceipt, receiptFromEth69, type Receipt } from '../../../net/eth/receipt.js';
import { encodeRlp } from '../../../net/eth/rlp.js';
import { EMPTY_TRIE_ROOT, orderedTrieRoot, withdrawalsRoot } from '../../../net/eth/trie-root.js';
import { decodeWithdrawal, encodeWithdrawal } from '../../../net/eth/withdrawal.js';

const TRANSFER: Hex = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const log: Log = {
  address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
  topics: [TRANSFER, `0x${'00'.repeat(12)}${'11'.repeat(20)}`, `0x${'00'.repeat(12)}${'22'.repeat(20)}`],
  data: `0x${'00'.repeat(31)}64`,
};

function receipt(type: Receipt['type'], status: Receipt['status'], logs: Log[]): Receipt {
  return { type, status, cumulativeGasUsed: 52_000n, logsBloom: logsBloom(logs), logs };
}

describe('logs bloom', () => {
  it('sets at most three bits for each of the address and the topics, and none for data', () => {
    const bloom = hexToBytes(logsBloom([log]));
    const bits = bloom.reduce((sum, byte) => sum + byte.toString(2).replaceAll('0', '').length, 0);
    assert.ok(bits > 0 && bits <= 12, `${bits} bits`);
    assert.equal(logsBloom([{ ...log, data: '0xffff' }]), logsBloom([log]));
  });

  it('may contain each address and topic it was built from; an absent value usually tests negative', () => {
    const bloom = logsBloom([log]);
    assert.ok(bloomMayContain(bloom, log.address));
    for (const topic of log.topics) assert.ok(bloomMayContain(bloom, topic));
    assert.ok(!bloomMayContain(bloom, `0x${'99'.repeat(20)}`));
    assert.ok(!bloomMayContain(EMPTY_BLOOM, log.address));
  });

  it('the bloom of no logs is all zeros and OR-combining is bitwise', () => {
    assert.equal(logsBloom([]), EMPTY_BLOOM);
    const a = logsBloom([log]);
    const b = logsBloom([{ ...log, address: '0xdac17f958d2ee523a2206206994597c13d831ec7' }]);
    const both = logsBloom([log, { ...log, address: '0xdac17f958d2ee523a2206206994597c13d831ec7' }]);
    assert.equal(combineBlooms([a, b]), both);
    assert.equal(combineBlooms([]), EMPTY_BLOOM);
  });
});

describe('receipts', () => {
  it('a legacy receipt has no type prefix; a typed one is type || rlp(...)', () => {
    const legacy = encodeReceipt(receipt('legacy', 'success', [log]));
    assert.ok(legacy[0]! >= 0xc0);
    const blob = encodeReceipt(receipt('eip4844', 'success', [log]));
    assert.equal(blob[0], 0x03);
    assert.deepEqual(blob.subarray(1), legacy);
  });

  it('status encodes as 0x01 for success and the empty string for reverted', () => {
    const fields = (r: Receipt) => bytesToHex(encodeReceipt(r)).slice(0, 12);
    assert.match(fields(receipt('legacy', 'success', [])), /^0xf9010[0-9a-f]01/);
    assert.match(fields(receipt('legacy', 'reverted', [])), /^0xf9010[0-9a-f]80/);
  });

  for (const type of ['legacy', 'eip2930', 'eip1559', 'eip4844', 'eip7702'] as const) {
    it(`${type} receipts round-trip in consensus and eth/69 form`, () => {
      for (const status of ['success', 'reverted'] as const) {
        const r = receipt(type, status, status === 'success' ? [log, log] : []);
        assert.deepEqual(decodeReceipt(encodeReceipt(r)), r);
        assert.deepEqual(decodeEth69Receipts(encodeEth69Receipts([r])), [r]);
      }
    });
  }

  it('eth/69 receipts carry no bloom: it is recomputed from the logs', () => {
    const eth69 = [0n, 1n, 21_000n, [[hexToBytes(log.address), log.topics.map((t) => hexToBytes(t)), hexToBytes(log.data)]]];
    const decoded = decodeEth69Receipts(encodeRlp([eth69]))[0]!;
    assert.equal(decoded.logsBloom, logsBloom([log]));
    assert.equal(decoded.type, 'legacy');
  });

  it('a pre-Byzantium receipt keeps its state root in place of the status, in both encodings', () => {
    const root = `0x${'aa'.repeat(32)}` as const;
    const withRoot = encodeRlp([hexToBytes(root), 21_000n, hexToBytes(EMPTY_BLOOM), []]);
    const decoded = decodeReceipt(withRoot);
    assert.equal(decoded.postState, root);
    assert.equal(decoded.cumulativeGasUsed, 21_000n);
    assert.deepEqual(encodeReceipt(decoded), withRoot);
    assert.deepEqual(decodeEth69Receipts(encodeEth69Receipts([decoded])), [decoded]);
  });

  it('rejects unknown types and wrong shapes', () => {
    assert.throws(() => decodeReceipt(concatBytes(Uint8Array.of(0x07), encodeRlp([1n, 1n, hexToBytes(EMPTY_BLOOM), []]))), UnsupportedTransactionTypeError);
    assert.throws(() => receiptFromEth69([]), (error: unknown) => error instanceof RlpDecodeError && /eth\/69 receipt/.test(error.message));
    assert.throws(() => decodeReceipt(encodeRlp([1n, 1n, hexToBytes('0x00'), []])), /field logsBloom: expected 256 bytes/);
  });
});

describe('withdrawals and trie roots', () => {
  const withdrawal = { index: 8n, validatorIndex: 5n, address: '0x1f4924b14f34e24159387c0a4cdbaa32f3ddb0cf' as const, amount: 100n };

  it('a withdrawal round-trips as [index, validatorIndex, address, amount]', () => {
    const bytes = encodeWithdrawal(withdrawal);
    assert.equal(bytesToHex(bytes), '0xd808059' + '41f4924b14f34e24159387c0a4cdbaa32f3ddb0cf64');
    assert.deepEqual(decodeWithdrawal(bytes), withdrawal);
    assert.throws(() => decodeWithdrawal(encodeRlp([1n, 2n])), /expected \[index, validatorIndex, address, amount\]/);
  });

  it('the empty trie root is keccak256(rlp("")) and is what an empty list gives', async () => {
    assert.equal(EMPTY_TRIE_ROOT, keccak256Hex(Uint8Array.of(0x80)));
    assert.equal(await orderedTrieRoot([]), EMPTY_TRIE_ROOT);
    assert.equal(await withdrawalsRoot([]), EMPTY_TRIE_ROOT);
  });

  it('a one-item trie root is keccak256 of its single leaf node', async () => {
    const value = encodeWithdrawal(withdrawal);
    const leaf = encodeRlp([hexToBytes('0x2080'), value]);
    assert.equal(await withdrawalsRoot([withdrawal]), keccak256Hex(leaf));
  });

  it('the root depends on order: swapping two items changes it', async () => {
    const items = [Uint8Array.of(1), Uint8Array.of(2), Uint8Array.of(3)];
    assert.notEqual(await orderedTrieRoot(items), await orderedTrieRoot([items[1]!, items[0]!, items[2]!]));
  });
});
