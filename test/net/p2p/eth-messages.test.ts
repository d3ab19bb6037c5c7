import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RlpDecodeError } from '../../../net/eth/errors.js';
import { keccak256Hex } from '../../../net/eth/keccak.js';
import { decodeEth69Receipts, encodeEth69Receipts } from '../../../net/eth/receipt.js';
import { verifyBlockMaterialBytes } from '../../../net/eth/verify-material.js';
import {
  decodeBlockRangeUpdate, decodeEth68Receipts, decodeGetBlockBodies, decodeGetBlockHeaders, decodeGetReceipts, decodeItemsResponse, decodeStatus,
  encodeBlockRangeUpdate, encodeEth68Receipts, encodeGetBlockBodies, encodeGetBlockHeaders, encodeGetReceipts, encodeItemsResponse, encodeStatus,
  peekRequestId, type EthStatus,
} from '../../../net/p2p/eth-messages.js';
import { mainnetBlocks } from '../eth/fixtures.js';

const GENESIS = '0xd4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3' as const;
const HEAD = '0x1111111111111111111111111111111111111111111111111111111111111111' as const;

describe('eth/68 and eth/69 messages', () => {
  it('eth/69 status round-trips without a total difficulty, with the served range', () => {
    const status: EthStatus = { version: 69, networkId: 1n, genesis: GENESIS, forkId: { hash: '0x07c9462e', next: 0 }, earliest: 0, latest: 22_431_084, head: HEAD };
    const decoded = decodeStatus(encodeStatus(status));
    assert.deepEqual(decoded, status);
    assert.equal('totalDifficulty' in decoded, false);
  });

  it('eth/68 status round-trips with td and best hash', () => {
    const status: EthStatus = { version: 68, networkId: 1337n, totalDifficulty: 58_750_003_716_598_352_816_469n, head: HEAD, genesis: GENESIS, forkId: { hash: '0xdeadbeef', next: 1_710_338_135 } };
    assert.deepEqual(decodeStatus(encodeStatus(status)), status);
  });

  it('a status of an unknown version or too few fields is refused', () => {
    assert.throws(() => decodeStatus(Uint8Array.of(0xc1, 0x41)), RlpDecodeError);
    assert.throws(() => decodeStatus(Uint8Array.of(0xc2, 0x44, 0x01)), RlpDecodeError);
  });

  it('GetBlockHeaders by number and by hash round-trip with their request id', () => {
    const byNumber = { requestId: 7n, origin: { number: 19_426_586 }, limit: 192, skip: 0, reverse: false };
    assert.deepEqual(decodeGetBlockHeaders(encodeGetBlockHeaders(byNumber)), byNumber);
    const byHash = { requestId: 2n ** 63n, origin: { hash: HEAD }, limit: 1, skip: 3, reverse: true };
    assert.deepEqual(decodeGetBlockHeaders(encodeGetBlockHeaders(byHash)), byHash);
  });

  it('GetBlockBodies and GetReceipts round-trip their hash lists', () => {
    const request = { requestId: 99n, hashes: [HEAD, GENESIS] };
    assert.deepEqual(decodeGetBlockBodies(encodeGetBlockBodies(request)), request);
    assert.deepEqual(decodeGetReceipts(encodeGetReceipts(request)), request);
  });

  it('BlockRangeUpdate round-trips and refuses earliest above latest', () => {
    const range = { earliest: 10, latest: 22_000_000, latestHash: HEAD };
    assert.deepEqual(decodeBlockRangeUpdate(encodeBlockRangeUpdate(range)), range);
    assert.throws(() => decodeBlockRangeUpdate(encodeBlockRangeUpdate({ earliest: 5, latest: 4, latestHash: HEAD })), /earliest 5 is above latest 4/);
  });

  const blocks = mainnetBlocks();

  it(`BlockHeaders and BlockBodies of ${blocks.length} mainnet blocks keep the exact bytes (hashes still match)`, () => {
    const headers = decodeItemsResponse(encodeItemsResponse({ requestId: 3n, items: blocks.map((b) => b.header) }), 'headers');
    assert.equal(headers.requestId, 3n);
    headers.items.forEach((item, i) => assert.equal(keccak256Hex(item), keccak256Hex(blocks[i]!.header)));
    const bodies = decodeItemsResponse(encodeItemsResponse({ requestId: 4n, items: blocks.map((b) => b.body) }), 'bodies');
    bodies.items.forEach((item, i) => assert.deepEqual(item, blocks[i]!.body));
    assert.equal(peekRequestId(encodeItemsResponse({ requestId: 4n, items: [] })), 4n);
  });

  it('eth/69 Receipts are the stored form; eth/68 Receipts (with blooms) convert to it and still verify against the header', () => {
    for (const block of blocks) {
      const receipts = decodeEth69Receipts(block.receipts);
      const eth68 = decodeEth68Receipts(encodeEth68Receipts(5n, [receipts]));
      assert.equal(eth68.requestId, 5n);
      assert.deepEqual(eth68.items[0], encodeEth69Receipts(receipts));
      assert.deepEqual(eth68.items[0], block.receipts);
      verifyBlockMaterialBytes({ header: block.header, body: block.body, receipts: eth68.items[0]! });
    }
  });

  it('a truncated answer is a decode error, not a crash', () => {
    const whole = encodeItemsResponse({ requestId: 1n, items: [blocks[0]!.header] });
    assert.throws(() => decodeItemsResponse(whole.subarray(0, whole.length - 3), 'headers'), RlpDecodeError);
    assert.equal(peekRequestId(Uint8Array.of(0x01)), null);
  });
});
