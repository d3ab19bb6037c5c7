/**
 * A kind's partial material (KindNeeds.partial, actors/processor/block-input.ts): the transaction encodings taken
 * as slices of the body, and the receipts' gas read without decoding their logs, against the full decode, on every
 * mainnet fixture block and on devnet blocks; and the blobs kind's output from partial material equals its output
 * from the full material.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { receiptGasUsed, receiptsOfInterest } from '../../../actors/processor/block-input.js';
import type { BlockInput } from '../../../actors/kinds/sdk/kind.js';
import { erc20Options } from '../../../actors/kinds/erc20/options.js';
import { TRANSFER_TOPIC, transferDeltas } from '../../../actors/kinds/erc20/transfers.js';
import type { LogInterest } from '../../../net/p2p/log-interest.js';
import type { Receipt } from '../../../net/eth/receipt.js';
import { bodyTransactionEncodings, transactionHashesOfBody } from '../../../net/eth/body-transaction-hashes.js';
import { hashTransaction } from '../../../net/eth/transaction-encode.js';
import { transformBlock } from '../../../actors/kinds/blobs/index.js';
import { blobTransactionsOnly } from '../../../actors/kinds/sdk/blob-transactions-only.js';
import { blobsKind } from '../../../actors/kinds/blobs/kind.js';
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
        const partial = transformBlock({ ...common, transactions: blobTransactionsOnly(bodyTransactionEncodings(block.body)), receipts: receiptGasUsed(block.receipts) });
        assert.deepEqual(partial, full, block.name);
        blobRows += full.transactions.length;
      }
    }
    assert.ok(blobRows > 10, `compared ${blobRows} blob transaction rows`);
  });

  it('receipts of a log interest carry exactly the matching logs, the full receipt\'s other fields and bloom; erc20\'s deltas are unchanged', () => {
    // The tokens with the most Transfer logs in the fixtures, so the interest matches some logs and skips others.
    const counts = new Map<string, number>();
    for (const block of mainnet) {
      for (const receipt of decodeEth69Receipts(block.receipts)) {
        for (const log of receipt.logs) if (log.topics[0] === TRANSFER_TOPIC) counts.set(log.address, (counts.get(log.address) ?? 0) + 1);
      }
    }
    const tokens = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([address]) => address as `0x${string}`);
    const interests: LogInterest[] = [
      { addresses: tokens, topics: [TRANSFER_TOPIC] },
      { addresses: [], topics: [TRANSFER_TOPIC] },
      { addresses: tokens.map((t) => t.toUpperCase().replace('0X', '0x') as `0x${string}`), topics: [] },
    ];
    const matches = (interest: LogInterest, log: Receipt['logs'][number]) =>
      (interest.addresses.length === 0 || interest.addresses.some((a) => a.toLowerCase() === log.address))
      && (interest.topics.length === 0 || log.topics.some((topic) => interest.topics.includes(topic)));
    let kept = 0;
    let skipped = 0;
    for (const block of [...mainnet, ...devnet.blocks]) {
      const full = decodeEth69Receipts(block.receipts);
      for (const interest of interests) {
        const partial = receiptsOfInterest(block.receipts, interest);
        assert.equal(partial.length, full.length, block.name);
        partial.forEach((receipt, i) => {
          const whole = full[i]!;
          const logs = whole.logs.filter((log) => matches(interest, log));
          kept += logs.length;
          skipped += whole.logs.length - logs.length;
          assert.deepEqual({ ...receipt, logs: receipt.logs }, { ...whole, logs }, `${block.name} receipt ${i}`);
          assert.equal(receipt.logsBloom, whole.logsBloom);
        });
      }
      const header = decodeHeader(block.header);
      const input = (receipts: Receipt[]): BlockInput => ({ number: header.number, hash: '0x', header, transactions: [], receipts, sizeBytes: 0, parentTimestamp: null });
      for (const options of [erc20Options({ tokens }), erc20Options({ tokens: '*' })]) {
        const interest: LogInterest = { addresses: options.tokens === null ? [] : [...options.tokens.keys()] as `0x${string}`[], topics: [TRANSFER_TOPIC] };
        assert.deepEqual(transferDeltas(input(receiptsOfInterest(block.receipts, interest)), options), transferDeltas(input(full), options), block.name);
      }
    }
    assert.ok(kept > 100 && skipped > 1000, `kept ${kept} logs, skipped ${skipped}`);
  });

  it('refuses malformed material', () => {
    assert.throws(() => receiptsOfInterest(Uint8Array.of(0xc2, 0xc1, 0x80), { addresses: [], topics: [] }), RlpDecodeError);
    assert.throws(() => bodyTransactionEncodings(Uint8Array.of(0xc1, 0xc0)), RlpDecodeError);
    assert.throws(() => receiptGasUsed(Uint8Array.of(0xc2, 0xc1, 0x80)), RlpDecodeError);
  });
});
