import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { blobBaseFee, blobCount, blobGasBurned, calcExcessBlobGas, executionGasBurned, GAS_PER_BLOB } from '../../../net/eth/blob-fee.js';
import { decodeBlockBody, encodeBlockBody, EMPTY_UNCLES_HASH, type BlockBody } from '../../../net/eth/block.js';
import { combineBlooms, logsBloom } from '../../../net/eth/bloom.js';
import { blobParamsAt, forkAt, MAINNET_SCHEDULE } from '../../../net/eth/fork-schedule.js';
import { decodeHeader, encodeHeader, hashHeader, type BlockHeader } from '../../../net/eth/header.js';
import type { Hash } from '../../../net/eth/hex.js';
import { keccak256Hex } from '../../../net/eth/keccak.js';
import { decodeEth69Receipts, decodeReceipt, encodeEth69Receipts, encodeReceipt, type Receipt } from '../../../net/eth/receipt.js';
import { decodeTransaction } from '../../../net/eth/transaction-decode.js';
import { encodeTransaction, hashTransaction } from '../../../net/eth/transaction-encode.js';
import { recoverTransactionSender } from '../../../net/eth/transaction-sender.js';
import { receiptsRoot, transactionsRoot, withdrawalsRoot } from '../../../net/eth/trie-root.js';
import { verifyBlock } from '../../../net/eth/verify-block.js';
import { mainnetBlocks, type MainnetBlockFixture } from './fixtures.js';

interface Decoded {
  fixture: MainnetBlockFixture;
  header: BlockHeader;
  hash: Hash;
  body: BlockBody;
  receipts: Receipt[];
}

const fixtures = mainnetBlocks();
const decoded = new Map<number, Decoded>();

describe('mainnet blocks (fixtures/mainnet-blocks)', () => {
  before(() => {
    for (const fixture of fixtures) {
      const header = decodeHeader(fixture.header);
      decoded.set(fixture.number, {
        fixture, header, hash: hashHeader(header), body: decodeBlockBody(fixture.body), receipts: decodeEth69Receipts(fixture.receipts),
      });
    }
  });

  it('holds the six blocks SOURCES.md lists', () => {
    assert.deepEqual(fixtures.map((f) => f.number), [19426586, 19426587, 22162263, 22431083, 22431084, 22869878]);
  });

  for (const fixture of fixtures) {
    describe(`block ${fixture.number}`, () => {
      const get = () => decoded.get(fixture.number)!;

      it('header decodes to the number in the file name and re-encodes byte for byte', () => {
        const { header, hash } = get();
        assert.equal(header.number, fixture.number);
        assert.deepEqual(encodeHeader(header), fixture.header);
        assert.equal(hash, keccak256Hex(fixture.header));
        assert.equal(header.sha3Uncles, EMPTY_UNCLES_HASH);
        assert.equal(header.difficulty, 0n);
      });

      it('header shape matches its fork', () => {
        const { header } = get();
        const fork = forkAt(MAINNET_SCHEDULE, header);
        const expectedFields = { shanghai: 17, cancun: 20, prague: 21 }[fork as 'shanghai' | 'cancun' | 'prague'];
        assert.ok(expectedFields, `unexpected fork ${fork}`);
        assert.equal(Object.values(header).filter((v) => v !== undefined).length, expectedFields);
      });

      it('body and eth/69 receipts re-encode byte for byte', () => {
        const { body, receipts } = get();
        assert.deepEqual(encodeBlockBody(body), fixture.body);
        assert.deepEqual(encodeEth69Receipts(receipts), fixture.receipts);
      });

      it('every transaction and consensus receipt round-trips through its canonical encoding', () => {
        const { body, receipts } = get();
        for (const tx of body.transactions) assert.deepEqual(decodeTransaction(encodeTransaction(tx)), tx);
        for (const receipt of receipts) assert.deepEqual(decodeReceipt(encodeReceipt(receipt)), receipt);
      });

      it('transactions, withdrawals and receipts roots (bloom recomputed per receipt) match the header', async () => {
        const { header, body, receipts } = get();
        assert.equal(receipts.length, body.transactions.length);
        assert.equal(await transactionsRoot(body.transactions), header.transactionsRoot);
        assert.ok(body.withdrawals);
        assert.equal(await withdrawalsRoot(body.withdrawals), header.withdrawalsRoot);
        for (const receipt of receipts) assert.equal(receipt.logsBloom, logsBloom(receipt.logs));
        assert.equal(await receiptsRoot(receipts), header.receiptsRoot);
        assert.equal(combineBlooms(receipts.map((r) => r.logsBloom)), header.logsBloom);
        assert.equal(receipts.at(-1)!.cumulativeGasUsed, header.gasUsed);
      });

      it('verifyBlock accepts the block with its hash, uncles, withdrawals and receipts', async () => {
        const { header, hash, body, receipts } = get();
        const verified = await verifyBlock({ header, transactions: body.transactions, withdrawals: body.withdrawals, uncles: body.uncles, receipts, expectedHash: hash });
        assert.equal(verified.hash, hash);
      });

      it('every sender recovers, and each transaction hash is keccak256 of its canonical bytes', () => {
        const { body } = get();
        for (const tx of body.transactions) {
          const sender = recoverTransactionSender(tx);
          assert.match(sender, /^0x[0-9a-f]{40}$/);
          assert.equal(hashTransaction(tx), keccak256Hex(encodeTransaction(tx)));
        }
      });

      it('blob gas used equals the blob count of its transactions; blob base fee and burns derive', () => {
        const { header, body, receipts } = get();
        const params = blobParamsAt(MAINNET_SCHEDULE, header);
        const blobs = body.transactions.reduce((sum, tx) => sum + blobCount(tx), 0);
        if (header.blobGasUsed === undefined) {
          assert.equal(params, undefined);
          assert.equal(blobs, 0);
          return;
        }
        assert.ok(params);
        assert.equal(header.blobGasUsed, BigInt(blobs) * GAS_PER_BLOB);
        const fee = blobBaseFee(header.excessBlobGas!, params.baseFeeUpdateFraction);
        assert.ok(fee >= 1n);
        assert.equal(blobGasBurned(header.blobGasUsed, fee), BigInt(blobs) * GAS_PER_BLOB * fee);
        assert.equal(executionGasBurned(header.gasUsed, header.baseFeePerGas!), receipts.at(-1)!.cumulativeGasUsed * header.baseFeePerGas!);
      });
    });
  }

  it('the Prague blocks with blob transactions carry blobs', () => {
    for (const number of [22162263, 22869878]) {
      const { body } = decoded.get(number)!;
      assert.ok(body.transactions.some((tx) => tx.type === 'eip4844'), `block ${number}`);
    }
  });

  for (const [parentNumber, childNumber, childFork] of [[19426586, 19426587, 'cancun'], [22431083, 22431084, 'prague']] as const) {
    it(`${parentNumber} → ${childNumber}: parent link holds and the child's excessBlobGas recomputes under ${childFork}`, async () => {
      const parent = decoded.get(parentNumber)!;
      const child = decoded.get(childNumber)!;
      assert.equal(forkAt(MAINNET_SCHEDULE, parent.header), childFork === 'cancun' ? 'shanghai' : 'cancun');
      assert.equal(forkAt(MAINNET_SCHEDULE, child.header), childFork);
      assert.equal(child.header.parentHash, parent.hash);
      await verifyBlock({ header: child.header, transactions: child.body.transactions, withdrawals: child.body.withdrawals, parent: parent.header });
      const params = blobParamsAt(MAINNET_SCHEDULE, child.header)!;
      assert.equal(calcExcessBlobGas(parent.header, params), child.header.excessBlobGas);
    });
  }

  it('the first Prague block needed the Prague target: the Cancun target gives a different excess', () => {
    const parent = decoded.get(22431083)!.header;
    const child = decoded.get(22431084)!.header;
    const cancun = blobParamsAt(MAINNET_SCHEDULE, parent)!;
    assert.notEqual(calcExcessBlobGas(parent, cancun), child.excessBlobGas);
  });
});
