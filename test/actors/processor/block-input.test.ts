/**
 * A kind's partial material (KindNeeds.partial, actors/processor/block-input.ts): the transaction encodings taken
 * as slices of the body, and the receipts' gas read without decoding their logs, against the full decode, on every
 * mainnet fixture block and on devnet blocks; and the blobs kind's output from partial material equals its output
 * from the full material.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { receiptGasUsed } from '../../../actors/processor/block-input.js';
import { bodyTransactionEncodings, transactionHashesOfBody } from '../../../net/eth/body-transaction-hashes.js';
import { hashTransaction } from '../../../net/eth/transaction-encode.js';
import { transformBlock, transformTransactions } from '../../../actors/processors/blobs/index.js';
import { blobsKind } from '../../../actors/processors/blobs/kind.js';
import { decodeBlockBody, encodeBlockBody } from '../../../net/eth/block.js';
import { MAINNET_SCHEDULE } from '../../../net/eth/fork-schedule.js';
import { decodeHeader, encodeHeader } from '../../../net/eth/header.js';
import { bytesToHex } from '../../../net/eth/hex.js';
import { decodeEth69Receipts, encodeEth69Receipts } from '../../../net/eth/receipt.js';
import { RlpDecodeError } from '../../../net/eth/errors.js';
import { encodeTransaction } from '../../../net/eth/transaction-encode.js';
import { generateChain } from '../../../net/devnet/generate-chain.js';
import { resolveDevnetConfig } from '../../../net/devnet/config.js';
import { devnetForkSchedule } from '../../../net/devnet/fork-schedule.js';
import { mainnetBlocks } from '../../net/eth/fixtures.js';

interface Material { readonly name: string; readonly header: Uint8Array; readonly body: Uint8Array; readonly receipts: Uint8Array }

async function devnetMaterial(): Promise<{ schedule: ReturnType<typeof devnetForkSchedule>; blocks: Material[] }> {
  const input = { transactionsPerBlock: 12, blobTransactionsPerBlock: 3, reorgEvery: 0, forks: { cancun: 0, prague: 0, osaka: 0, bpo1: 0 } };
  const blocks = (await generateChain(input, 12)).map(({ block, receipts }): Material => ({
    name: `devnet block ${block.header.number}`,
    header: encodeHeader(block.header),
    body: encodeBlockBody(block),
    receipts: encodeEth69Receipts(receipts),
  }));
  return { schedule: devnetForkSchedule(resolveDevnetConfig(input)), blocks };
}

describe('partial block material for kinds that read part of it', () => {
  const mainnet = mainnetBlocks().map((f): Material => ({ name: f.file, header: f.header, body: f.body, receipts: f.receipts }));
  let devnet: Awaited<ReturnType<typeof devnetMaterial>>;
  before(async () => { devnet = await devnetMaterial(); });

  it('the blobs kind asks for blob transactions and receipt gas only', () => {
    assert.deepEqual(blobsKind.needs.partial, { blobTransactionsOnly: true, receiptGasOnly: true });
  });

  it('transaction encodings, their batched hashes and receipt gas equal the full decode on mainnet fixtures and devnet blocks', () => {
    let transactions = 0;
    for (const block of [...mainnet, ...devnet.blocks]) {
      const full = decodeBlockBody(block.body).transactions;
      assert.deepEqual(bodyTransactionEncodings(block.body).map(bytesToHex), full.map((tx) => bytesToHex(encodeTransaction(tx))), block.name);
      assert.deepEqual(transactionHashesOfBody(block.body).map(bytesToHex), full.map(hashTransaction), block.name);
      assert.deepEqual(receiptGasUsed(block.receipts), decodeEth69Receipts(block.receipts).map((r) => ({ cumulativeGasUsed: r.cumulativeGasUsed })), block.name);
      transactions += full.length;
    }
    assert.ok(transactions > 1000, `checked ${transactions} transactions`);
  });

  it('the blobs transform from partial material equals it from full material', () => {
    let blobRows = 0;
    for (const [schedule, blocks] of [[MAINNET_SCHEDULE, mainnet], [devnet.schedule, devnet.blocks]] as const) {
      for (const block of blocks) {
        const header = decodeHeader(block.header);
        if (header.blobGasUsed === undefined) continue;
        const common = { network: 'n', schedule, header, blockSizeBytes: null, finality: 'finalized' as const };
        const full = transformBlock({ ...common, transactions: decodeBlockBody(block.body).transactions, receipts: decodeEth69Receipts(block.receipts) });
        const partial = transformBlock({ ...common, transactions: transformTransactions(bodyTransactionEncodings(block.body)), receipts: receiptGasUsed(block.receipts) });
        assert.deepEqual(partial, full, block.name);
        blobRows += full.transactions.length;
      }
    }
    assert.ok(blobRows > 10, `compared ${blobRows} blob transaction rows`);
  });

  it('refuses malformed material', () => {
    assert.throws(() => bodyTransactionEncodings(Uint8Array.of(0xc1, 0xc0)), RlpDecodeError);
    assert.throws(() => receiptGasUsed(Uint8Array.of(0xc2, 0xc1, 0x80)), RlpDecodeError);
  });
});
