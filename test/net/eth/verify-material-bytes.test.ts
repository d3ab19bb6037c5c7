/**
 * The byte-level verification walks with reused spans and writes consensus receipts into a buffer reused from block
 * to block: blocks verified one after another, in any order and again, must give the same answers, a receipt list
 * larger than that buffer must be framed correctly, and a single flipped byte in a transaction or a log must still be
 * named as the root it breaks.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeBlockBody } from '../../../net/eth/block.js';
import { BlockVerificationError, RlpDecodeError } from '../../../net/eth/errors.js';
import { decodeHeader } from '../../../net/eth/header.js';
import { hexToBytes } from '../../../net/eth/hex.js';
import { decodeEth69Receipts, encodeReceipt } from '../../../net/eth/receipt.js';
import { encodeTransaction } from '../../../net/eth/transaction-encode.js';
import { verifyBlockMaterialBytes } from '../../../net/eth/verify-material.js';
import { mainnetBlocks, type MainnetBlockFixture } from './fixtures.js';

/** The receipt buffer's first size (verify-material.ts): a fixture above it makes the buffer grow mid-block. */
const FIRST_RECEIPT_BUFFER_BYTES = 1 << 16;

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function flipped(bytes: Uint8Array, at: number): Uint8Array {
  const copy = bytes.slice();
  copy[at]! ^= 0x01;
  return copy;
}

function expectMismatch(fixture: MainnetBlockFixture, input: { body?: Uint8Array; receipts?: Uint8Array }, field: string): void {
  assert.throws(
    () => verifyBlockMaterialBytes({ header: fixture.header, body: input.body ?? fixture.body, receipts: input.receipts ?? fixture.receipts }),
    (error: unknown) => {
      assert.ok(error instanceof BlockVerificationError, `${fixture.file}: ${String(error)}`);
      assert.equal(error.field, field, fixture.file);
      return true;
    },
  );
}

describe('verifyBlockMaterialBytes over many blocks (reused spans and receipt buffer)', () => {
  const fixtures = mainnetBlocks();

  it('frames a receipt list larger than the first receipt buffer (it grows mid-block; first, while the buffer is fresh)', () => {
    const sizes = fixtures.map((f) => decodeEth69Receipts(f.receipts).reduce((sum, r) => sum + encodeReceipt(r).length, 0));
    const large = fixtures.filter((_, i) => sizes[i]! > FIRST_RECEIPT_BUFFER_BYTES);
    assert.ok(large.length > 0, `some fixture's consensus receipts exceed ${FIRST_RECEIPT_BUFFER_BYTES} bytes (sizes ${sizes.join(', ')})`);
    for (const f of large) assert.equal(verifyBlockMaterialBytes({ header: f.header, body: f.body, receipts: f.receipts }).hash.length, 66);
  });

  it('gives the same answer for every mainnet block verified in turn, in reverse and again', () => {
    const first = fixtures.map((f) => verifyBlockMaterialBytes({ header: f.header, body: f.body, receipts: f.receipts }));
    const order = [...fixtures.keys()].reverse().concat([...fixtures.keys()]);
    for (const index of order) {
      const f = fixtures[index]!;
      const again = verifyBlockMaterialBytes({ header: f.header, body: f.body, receipts: f.receipts });
      assert.equal(again.hash, first[index]!.hash, f.file);
      assert.deepEqual(again.cumulativeGasUsed, first[index]!.cumulativeGasUsed, f.file);
    }
  });

  it('names transactionsRoot when one byte of a transaction (its last signature byte) is flipped, in every block', () => {
    for (const f of fixtures) {
      const tx = decodeBlockBody(f.body).transactions.at(-1);
      if (tx === undefined) continue;
      const encoding = encodeTransaction(tx);
      const at = indexOf(f.body, encoding);
      assert.ok(at > 0, f.file);
      expectMismatch(f, { body: flipped(f.body, at + encoding.length - 1) }, 'transactionsRoot');
    }
  });

  it('names receiptsRoot when one byte of a log topic is flipped, in every block with logs', () => {
    let checked = 0;
    for (const f of fixtures) {
      const topic = decodeEth69Receipts(f.receipts).flatMap((r) => r.logs).flatMap((log) => log.topics).at(-1);
      if (topic === undefined) continue;
      const at = indexOf(f.receipts, hexToBytes(topic));
      assert.ok(at > 0, f.file);
      expectMismatch(f, { receipts: flipped(f.receipts, at + 31) }, 'receiptsRoot');
      checked += 1;
    }
    assert.ok(checked >= 4);
  });

  it('names the receipt field count when a receipt has three or five fields', () => {
    const f = fixtures[0]!;
    const header = decodeHeader(f.header);
    // One receipt [type, status, cumulativeGasUsed] (3 fields) and one with a fifth field.
    const three = Uint8Array.of(0xc4, 0xc3, 0x02, 0x01, 0x05);
    const five = Uint8Array.of(0xc6, 0xc5, 0x02, 0x01, 0x05, 0xc0, 0x80);
    for (const [receipts, count] of [[three, 3], [five, 5]] as const) {
      assert.throws(() => verifyBlockMaterialBytes({ header: f.header, body: f.body, receipts }), (error: unknown) => {
        assert.ok(error instanceof RlpDecodeError, String(error));
        assert.match(error.message, new RegExp(`expected 4 fields, got ${count}`));
        return true;
      }, `block ${header.number}`);
    }
  });
});
