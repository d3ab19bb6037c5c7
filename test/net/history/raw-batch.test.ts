/**
 * History batches in the raw encoding (`debug_getRawBlock` + `debug_getRawReceipts`): over the real mainnet fixture
 * blocks (Shanghai, Cancun, Prague; blob and set-code transactions), the material the pool makes from the raw answers
 * is byte-identical to the fixtures' stored shape, and to what the JSON path makes from the same blocks' JSON; a
 * tampered or malformed answer is refused, and the lane's own path names the block and the reason. The raw answers
 * are built with the generic RLP encoder and the consensus receipt encoder (raw-answers.ts), not with the code under test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BlockView } from '../../../api/rpc/block-view.js';
import { renderBlock } from '../../../api/rpc/render-block.js';
import { blockReceipts } from '../../../api/rpc/render-receipt.js';
import { MAINNET_SCHEDULE } from '../../../net/eth/fork-schedule.js';
import { keccak256 } from '../../../net/eth/keccak.js';
import { bytesToHex } from '../../../net/eth/hex.js';
import { HistoryBlockError } from '../../../net/history/history-block.js';
import { resolveRawAnswers } from '../../../net/history/raw-batch.js';
import { convertRpcBatch, unpackRpcBatch, type RpcBatchInput } from '../../../net/history/rpc-batch.js';
import { mainnetBlocks } from '../eth/fixtures.js';
import { flipFirstReceiptStatus } from '../../support/rpc-proxy.js';
import { rawBlockHex, rawReceiptsHex } from './raw-answers.js';

const fixtures = mainnetBlocks();

/** A batch answer for `blocks` (ids 2i and 2i+1), in reverse order (answers are matched by id), with `space` between tokens. */
function answerText(blocks: ReadonlyArray<{ block: string; receipts: readonly string[] }>, space = ''): string {
  const entries = blocks.flatMap(({ block, receipts }, i) => [
    `{${space}"jsonrpc":${space}"2.0",${space}"id":${space}${2 * i},${space}"result":${space}"${block}"${space}}`,
    `{${space}"result":${space}[${receipts.map((r) => `"${r}"`).join(`,${space}`)}],${space}"id":${space}${2 * i + 1},${space}"jsonrpc":"2.0"}`,
  ]);
  return `[${space}${entries.reverse().join(`,${space}`)}${space}]`;
}

const input = (text: string, from: number, to: number): RpcBatchInput => ({
  bytes: Buffer.from(text), ids: Array.from({ length: 2 * (to - from + 1) }, (_, i) => i), from, to, pooledBlobRoots: false, encoding: 'raw',
});

describe('a raw history batch (debug_getRawBlock + debug_getRawReceipts) converted on the CPU pool', () => {
  it('makes every mainnet fixture block\'s stored material byte for byte, as the JSON path does from the same block', async () => {
    assert.ok(fixtures.length >= 6);
    for (const fixture of fixtures) {
      const raw = { block: rawBlockHex(fixture.header, fixture.body), receipts: rawReceiptsHex(fixture.receipts) };
      const packed = await convertRpcBatch(input(answerText([raw], ' \n\t'), fixture.number, fixture.number));
      assert.ok(packed !== null, `block ${fixture.number} refused`);
      const [block] = unpackRpcBatch(packed);
      assert.equal(block!.number, fixture.number);
      assert.equal(block!.hash, bytesToHex(keccak256(fixture.header)));
      assert.deepEqual(Buffer.from(block!.material.header), Buffer.from(fixture.header));
      assert.deepEqual(Buffer.from(block!.material.body), Buffer.from(fixture.body));
      assert.deepEqual(Buffer.from(block!.material.receipts!), Buffer.from(fixture.receipts));

      // The JSON path over the same block answers the same bytes.
      const view = new BlockView({ hash: keccak256(fixture.header), number: fixture.number, header: fixture.header, body: fixture.body, receipts: fixture.receipts });
      const json = `[{"jsonrpc":"2.0","id":0,"result":${renderBlock(view, true).toString()}},{"jsonrpc":"2.0","id":1,"result":[${blockReceipts(view, MAINNET_SCHEDULE)!.join(',')}]}]`;
      const viaJson = unpackRpcBatch((await convertRpcBatch({ ...input(json, fixture.number, fixture.number), encoding: 'json' }))!)[0]!;
      assert.deepEqual(Buffer.from(viaJson.material.body), Buffer.from(block!.material.body));
      assert.deepEqual(Buffer.from(viaJson.material.receipts!), Buffer.from(block!.material.receipts!));

      // What this node serves as debug_getRawBlock is the same RLP.
      assert.equal(bytesToHex(view.rawBlock()), raw.block);
    }
  });

  it('converts consecutive blocks of one batch and links them', async () => {
    const pair = fixtures.filter((f) => f.number === 22431083 || f.number === 22431084);
    assert.equal(pair.length, 2);
    const packed = await convertRpcBatch(input(answerText(pair.map((f) => ({ block: rawBlockHex(f.header, f.body), receipts: rawReceiptsHex(f.receipts) }))), 22431083, 22431084));
    const blocks = unpackRpcBatch(packed!);
    assert.deepEqual(blocks.map((b) => b.number), [22431083, 22431084]);
    assert.equal(blocks[1]!.parentHash, blocks[0]!.hash);
  });

  it('refuses a tampered receipt, a bad hex digit, an odd length, an error object, a null block, the wrong block; the lane\'s path names the block and why', async () => {
    const fixture = fixtures.find((f) => f.number === 22431084)!;
    const block = rawBlockHex(fixture.header, fixture.body);
    const receipts = rawReceiptsHex(fixture.receipts);
    const n = fixture.number;
    assert.ok((await convertRpcBatch(input(answerText([{ block, receipts }]), n, n))) !== null);

    // The first receipt's status flipped: the receipts root no longer matches.
    const tampered = [...receipts];
    flipFirstReceiptStatus({ id: 0, result: tampered });
    assert.equal(await convertRpcBatch(input(answerText([{ block, receipts: tampered }]), n, n)), null);
    assert.throws(() => resolveRawAnswers(n, block, tampered), (error: unknown) => error instanceof HistoryBlockError && error.blockNumber === n && /verification failed: receiptsRoot mismatch/.test(error.message));

    const badDigit = `${block.slice(0, 100)}g${block.slice(101)}`;
    assert.equal(await convertRpcBatch(input(answerText([{ block: badDigit, receipts }]), n, n)), null);
    assert.throws(() => resolveRawAnswers(n, badDigit, receipts), /block 22431084: debug_getRawBlock is not hex-encoded bytes/);
    assert.equal(await convertRpcBatch(input(answerText([{ block: block.slice(0, -1), receipts }]), n, n)), null);
    assert.equal(await convertRpcBatch(input(answerText([{ block, receipts }]).replace('"result":"', '"error":{"code":-32601,"message":"the method \\"debug_getRawBlock\\" does not exist"},"x":"'), n, n)), null);
    assert.equal(await convertRpcBatch(input(answerText([{ block, receipts }]).replace(`"${block}"`, 'null'), n, n)), null);
    assert.throws(() => resolveRawAnswers(n, null, receipts), /block 22431084: the upstream does not have this block/);
    assert.throws(() => resolveRawAnswers(n, block, null), /did not serve its receipts \(debug_getRawReceipts answered null\)/);
    // Block n's answer asked as block n + 1.
    assert.equal(await convertRpcBatch(input(answerText([{ block, receipts }]), n + 1, n + 1)), null);
    assert.throws(() => resolveRawAnswers(n + 1, block, receipts), /block 22431085: the upstream answered with block 22431084/);
    // A receipt cut short, and trailing bytes after the block's list.
    assert.throws(() => resolveRawAnswers(n, block, [receipts[0]!.slice(0, -2), ...receipts.slice(1)]), /block 22431084: malformed raw material/);
    assert.throws(() => resolveRawAnswers(n, `${block}00`, receipts), /block 22431084: malformed raw material/);
    assert.equal(await convertRpcBatch(input('not json', n, n)), null);
    assert.equal(await convertRpcBatch(input(`${answerText([{ block, receipts }])}]`, n, n)), null);
  });
});
