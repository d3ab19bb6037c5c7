/**
 * Hash and signing hash of typed transactions straight from their canonical bytes (net/eth/transaction-raw.ts)
 * against the encode-the-object path, on every typed transaction of the mainnet fixtures, and the blob rows the
 * transform builds from encodings (kept bytes) against the rows it builds from full transactions.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeBlockBody } from '../../../net/eth/block.js';
import { RlpDecodeError } from '../../../net/eth/errors.js';
import { MAINNET_SCHEDULE } from '../../../net/eth/fork-schedule.js';
import { decodeHeader } from '../../../net/eth/header.js';
import { bytesToHex } from '../../../net/eth/hex.js';
import { decodeEth69Receipts } from '../../../net/eth/receipt.js';
import { encodeTransaction, hashTransaction, transactionSigningHash } from '../../../net/eth/transaction-encode.js';
import { hashTransactionEncoding, typedSigningHash, typedSigningPayload } from '../../../net/eth/transaction-raw.js';
import { transformBlock } from '../../../actors/kinds/blobs/index.js';
import { blobTransactionsOnly } from '../../../actors/kinds/sdk/blob-transactions-only.js';
import { mainnetBlocks } from './fixtures.js';

describe('typed transactions: hash and signing hash from the canonical bytes', () => {
  const fixtures = mainnetBlocks();

  it('equal hashTransaction and transactionSigningHash for every typed transaction of the mainnet fixtures', () => {
    const types = new Set<string>();
    let checked = 0;
    for (const f of fixtures) {
      for (const tx of decodeBlockBody(f.body).transactions) {
        const encoding = encodeTransaction(tx);
        assert.equal(hashTransactionEncoding(encoding), hashTransaction(tx));
        if (tx.type === 'legacy') continue;
        assert.equal(bytesToHex(typedSigningHash(encoding)), bytesToHex(transactionSigningHash(tx)), `${f.file} ${hashTransaction(tx)}`);
        types.add(tx.type);
        checked += 1;
      }
    }
    assert.ok(checked > 500, `checked ${checked}`);
    for (const type of ['eip1559', 'eip4844']) assert.ok(types.has(type), `the fixtures hold ${type} transactions`);
  });

  it('refuses bytes that are not a typed transaction', () => {
    assert.throws(() => typedSigningPayload(Uint8Array.of(0xc0)), RlpDecodeError);
    assert.throws(() => typedSigningPayload(Uint8Array.of(0x02, 0x80)), RlpDecodeError);
    assert.throws(() => typedSigningPayload(Uint8Array.of(0x02, 0xc3, 0x01, 0x02, 0x03)), /more than 3 fields/);
    assert.throws(() => typedSigningPayload(Uint8Array.of(0x02, 0xc4, 0x01, 0x02, 0x03, 0x04, 0x00)), /bytes after the payload/);
  });

  it('the blob transform gives the same rows from encodings (kept bytes) as from full transactions', () => {
    let blobRows = 0;
    for (const f of fixtures) {
      const header = decodeHeader(f.header);
      const body = decodeBlockBody(f.body);
      const receipts = decodeEth69Receipts(f.receipts);
      if (header.blobGasUsed === undefined) continue;
      const common = { network: 'mainnet', schedule: MAINNET_SCHEDULE, header, receipts, blockSizeBytes: null, finality: 'included' as const };
      const fromFull = transformBlock({ ...common, transactions: body.transactions });
      const fromBytes = transformBlock({ ...common, transactions: blobTransactionsOnly(body.transactions.map(encodeTransaction)) });
      assert.deepEqual(fromBytes, fromFull, f.file);
      blobRows += fromFull.transactions.length;
    }
    assert.ok(blobRows > 0, 'the fixtures hold blob transactions');
  });
});
