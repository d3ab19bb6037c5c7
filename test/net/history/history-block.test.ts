import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkHashChain, HistoryBlockError, type HistoryBlock } from '../../../net/history/history-block.js';
import type { Hash } from '../../../net/eth/hex.js';

const h = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as Hash;
const block = (number: number, parent = number - 1): HistoryBlock => ({ number, hash: h(number + 1000), parentHash: h(parent + 1000), material: { number, hash: new Uint8Array(32), header: new Uint8Array(), body: new Uint8Array(), receipts: null } });

test('a chunk that links block to block, and to its known neighbours, passes', () => {
  checkHashChain([block(10), block(11), block(12)], 10, h(1009), h(1012));
  checkHashChain([block(10), block(11)], 10, null, null);
});

test('a broken link names the block: inside the chunk, to the block below, to the block above, or a wrong number', () => {
  const fails = (fn: () => void, number: number, reason: RegExp) => assert.throws(fn, (error: unknown) => error instanceof HistoryBlockError && error.blockNumber === number && reason.test(error.reason));
  fails(() => checkHashChain([block(10), block(11, 5), block(12)], 10, null, null), 11, /does not link to block 10/);
  fails(() => checkHashChain([block(10), block(11)], 10, h(7), null), 10, /does not link to block 9/);
  fails(() => checkHashChain([block(10), block(11)], 10, null, h(77)), 11, /is not the parent of block 12/);
  fails(() => checkHashChain([block(10), block(12)], 10, null, null), 11, /answered with block 12/);
});
