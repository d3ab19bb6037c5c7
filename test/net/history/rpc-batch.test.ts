import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BlockView } from '../../../api/rpc/block-view.js';
import { renderBlock } from '../../../api/rpc/render-block.js';
import { blockReceipts } from '../../../api/rpc/render-receipt.js';
import { MAINNET_SCHEDULE } from '../../../net/eth/fork-schedule.js';
import { keccak256 } from '../../../net/eth/keccak.js';
import { HistoryBlockError } from '../../../net/history/history-block.js';
import { convertRpcBatch, unpackRpcBatch, type RpcBatchInput } from '../../../net/history/rpc-batch.js';
import { convert } from '../../../net/history/rpc-history.js';
import { mainnetBlocks } from '../eth/fixtures.js';

/** Two consecutive mainnet blocks (last Cancun, first Prague) as an upstream answers a history batch for them. */
function batchOf(numbers: readonly number[]): { blocks: string[]; receipts: string[]; fixtures: ReturnType<typeof mainnetBlocks> } {
  const fixtures = mainnetBlocks().filter((block) => numbers.includes(block.number));
  const views = fixtures.map((f) => new BlockView({ hash: keccak256(f.header), number: f.number, header: f.header, body: f.body, receipts: f.receipts }));
  return {
    blocks: views.map((view) => renderBlock(view, true).toString()),
    receipts: views.map((view) => `[${blockReceipts(view, MAINNET_SCHEDULE)!.join(',')}]`),
    fixtures,
  };
}

function responseText(blocks: readonly string[], receipts: readonly string[], ids: readonly number[]): string {
  const entries = blocks.flatMap((block, i) => [`{"jsonrpc":"2.0","id":${ids[2 * i]},"result":${block}}`, `{"jsonrpc":"2.0","id":${ids[2 * i + 1]},"result":${receipts[i]}}`]);
  // Answers may come in any order: they are matched by id.
  return `[${entries.reverse().join(',')}]`;
}

describe('an rpc history batch converted on the CPU pool (convertRpcBatch)', () => {
  const numbers = [22431083, 22431084];
  const { blocks, receipts, fixtures } = batchOf(numbers);
  const ids = [11, 12, 13, 14];
  const input = (text: string): RpcBatchInput => ({ bytes: Buffer.from(text), ids, from: numbers[0]!, to: numbers[1]!, pooledBlobRoots: false });

  it('answers the verified material of every block, byte-identical to the lane\'s own conversion', async () => {
    const packed = await convertRpcBatch(input(responseText(blocks, receipts, ids)));
    assert.ok(packed !== null);
    const unpacked = unpackRpcBatch(packed);
    assert.deepEqual(unpacked.map((b) => b.number), numbers);
    for (const [i, block] of unpacked.entries()) {
      const lane = await convert(numbers[i]!, JSON.parse(blocks[i]!), JSON.parse(receipts[i]!), false);
      assert.equal(block.hash, lane.hash);
      assert.equal(block.parentHash, lane.parentHash);
      assert.deepEqual([block.material.hash, block.material.header, block.material.body, block.material.receipts].map((b) => Buffer.from(b!).toString('hex')),
        [lane.material.hash, lane.material.header, lane.material.body, lane.material.receipts].map((b) => Buffer.from(b!).toString('hex')));
      assert.deepEqual(Buffer.from(block.material.header), Buffer.from(fixtures[i]!.header));
    }
    assert.equal(unpacked[1]!.parentHash, unpacked[0]!.hash);
  });

  it('answers null for a tampered block (the lane resolves it again and names the block), an error object or a malformed body', async () => {
    // One log's data changed: the receipts root no longer matches.
    const tampered = receipts[1]!.replace(/"data":"0x([0-9a-f])/, (_m, digit: string) => `"data":"0x${digit === '0' ? '1' : '0'}`);
    assert.notEqual(tampered, receipts[1]);
    assert.equal(await convertRpcBatch(input(responseText(blocks, [receipts[0]!, tampered], ids))), null);
    await assert.rejects(convert(numbers[1]!, JSON.parse(blocks[1]!), JSON.parse(tampered), false), (error: unknown) => error instanceof HistoryBlockError && error.blockNumber === numbers[1] && /verification failed/.test(error.message));
    const withError = responseText(blocks, receipts, ids).replace(`{"jsonrpc":"2.0","id":12,"result":${receipts[0]}}`, '{"jsonrpc":"2.0","id":12,"error":{"code":-32000,"message":"pruned"}}');
    assert.equal(await convertRpcBatch(input(withError)), null);
    assert.equal(await convertRpcBatch(input('{"jsonrpc":"2.0","id":11,"error":{"code":-32600,"message":"batches are off"}}')), null);
    assert.equal(await convertRpcBatch(input('not json')), null);
    assert.equal(await convertRpcBatch({ ...input(responseText(blocks, receipts, ids)), ids: [11, 12, 13, 99] }), null);
  });
});
