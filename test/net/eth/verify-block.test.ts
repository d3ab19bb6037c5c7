import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { decodeBlockBody, type BlockBody } from '../../../net/eth/block.js';
import { BlockVerificationError, type BlockVerificationField } from '../../../net/eth/errors.js';
import { decodeHeader, hashHeader, type BlockHeader } from '../../../net/eth/header.js';
import type { Hash } from '../../../net/eth/hex.js';
import { decodeEth69Receipts, type Receipt } from '../../../net/eth/receipt.js';
import { EMPTY_TRIE_ROOT } from '../../../net/eth/trie-root.js';
import { verifyBlock, type VerifyBlockParameters } from '../../../net/eth/verify-block.js';
import { mainnetBlocks } from './fixtures.js';

describe('verifyBlock names what does not match (mainnet 22431084 and its parent, each tampered once)', () => {
  let header: BlockHeader;
  let parent: BlockHeader;
  let hash: Hash;
  let body: BlockBody;
  let receipts: Receipt[];
  let shanghaiHeader: BlockHeader;

  before(() => {
    const fixtures = mainnetBlocks();
    const child = fixtures.find((f) => f.number === 22431084)!;
    header = decodeHeader(child.header);
    hash = hashHeader(header);
    parent = decodeHeader(fixtures.find((f) => f.number === 22431083)!.header);
    body = decodeBlockBody(child.body);
    receipts = decodeEth69Receipts(child.receipts);
    shanghaiHeader = decodeHeader(fixtures.find((f) => f.number === 19426586)!.header);
  });

  const complete = (): VerifyBlockParameters => ({
    header, parent, expectedHash: hash, transactions: body.transactions, withdrawals: body.withdrawals, uncles: body.uncles, receipts,
  });

  async function rejects(params: VerifyBlockParameters, field: BlockVerificationField, expected?: string, actual?: string): Promise<void> {
    await assert.rejects(verifyBlock(params), (error: unknown) => {
      assert.ok(error instanceof BlockVerificationError, String(error));
      assert.equal(error.name, 'BlockVerificationError');
      assert.equal(error.field, field);
      if (expected !== undefined) assert.equal(error.expected, expected);
      if (actual !== undefined) assert.equal(error.actual, actual);
      assert.equal(error.blockNumber, params.header.number);
      assert.equal(error.blockHash, hashHeader(params.header));
      assert.notEqual(error.expected, error.actual);
      assert.match(error.message, new RegExp(`^Block ${params.header.number} \\(0x[0-9a-f]{64}\\) failed verification: ${field} expected `));
      return true;
    });
  }

  it('accepts the untampered block', async () => {
    assert.deepEqual(await verifyBlock(complete()), { hash });
  });

  it('hash: a different expected hash', async () => {
    await rejects({ ...complete(), expectedHash: parent.parentHash }, 'hash', parent.parentHash, hash);
  });

  it('parentHash: a parent that is not this block’s parent', async () => {
    await rejects({ ...complete(), parent: shanghaiHeader }, 'parentHash', header.parentHash, hashHeader(shanghaiHeader));
  });

  it('number: a parent whose hash links but whose number is not one less', async () => {
    const renumbered = { ...parent, number: parent.number - 1 };
    const relinked = { ...header, parentHash: hashHeader(renumbered) };
    await rejects({ ...complete(), header: relinked, expectedHash: undefined, parent: renumbered }, 'number', String(renumbered.number + 1), String(header.number));
  });

  it('sha3Uncles: an uncle in a post-merge body', async () => {
    await rejects({ ...complete(), uncles: [parent] }, 'sha3Uncles', header.sha3Uncles);
  });

  it('transactionsRoot: one transaction value changed', async () => {
    const transactions = body.transactions.map((tx, i) => (i === 3 ? { ...tx, value: tx.value + 1n } : tx));
    await rejects({ ...complete(), transactions }, 'transactionsRoot', header.transactionsRoot);
  });

  it('transactionsRoot: one transaction missing', async () => {
    await rejects({ ...complete(), transactions: body.transactions.slice(1), receipts: undefined }, 'transactionsRoot', header.transactionsRoot);
  });

  it('withdrawalsRoot: one withdrawal amount changed', async () => {
    const withdrawals = body.withdrawals!.map((w, i) => (i === 0 ? { ...w, amount: w.amount + 1n } : w));
    await rejects({ ...complete(), withdrawals }, 'withdrawalsRoot', header.withdrawalsRoot);
  });

  it('withdrawalsRoot: withdrawals missing for a Shanghai-or-later header', async () => {
    await rejects({ ...complete(), withdrawals: undefined }, 'withdrawalsRoot', header.withdrawalsRoot, 'absent');
  });

  it('withdrawalsRoot: withdrawals given for a header without withdrawalsRoot', async () => {
    const london = { ...header } as Partial<BlockHeader>;
    for (const key of ['withdrawalsRoot', 'blobGasUsed', 'excessBlobGas', 'parentBeaconBlockRoot', 'requestsHash'] as const) delete london[key];
    await rejects({ ...complete(), header: london as BlockHeader, expectedHash: undefined, parent: undefined }, 'withdrawalsRoot', 'absent');
  });

  it('blobGasUsed: a header claiming one blob more than its transactions carry', async () => {
    const tampered = { ...header, blobGasUsed: header.blobGasUsed! + 131072n };
    await rejects({ ...complete(), header: tampered, expectedHash: undefined }, 'blobGasUsed', String(tampered.blobGasUsed), String(header.blobGasUsed));
  });

  it('receiptCount: one receipt missing', async () => {
    await rejects({ ...complete(), receipts: receipts.slice(0, -1) }, 'receiptCount', String(receipts.length), String(receipts.length - 1));
  });

  it('receiptsRoot: one receipt status flipped', async () => {
    const tampered = receipts.map((r, i) => (i === 0 ? { ...r, status: r.status === 'success' ? 'reverted' as const : 'success' as const } : r));
    await rejects({ ...complete(), receipts: tampered }, 'receiptsRoot', header.receiptsRoot);
  });

  it('logsBloom: a header bloom that is not the OR of the receipt blooms', async () => {
    const tampered = { ...header, logsBloom: `0x${'ff'.repeat(256)}` as const };
    await rejects({ ...complete(), header: tampered, expectedHash: undefined }, 'logsBloom', tampered.logsBloom, header.logsBloom);
  });

  it('gasUsed: a header gasUsed that is not the last cumulativeGasUsed', async () => {
    const tampered = { ...header, gasUsed: header.gasUsed - 1n };
    await rejects({ ...complete(), header: tampered, expectedHash: undefined }, 'gasUsed', String(header.gasUsed - 1n), String(header.gasUsed));
  });

  it('an empty block verifies against the empty roots', async () => {
    const empty = { ...header, transactionsRoot: EMPTY_TRIE_ROOT, receiptsRoot: EMPTY_TRIE_ROOT, withdrawalsRoot: EMPTY_TRIE_ROOT,
      blobGasUsed: 0n, gasUsed: 0n, logsBloom: `0x${'00'.repeat(256)}` as const };
    await verifyBlock({ header: empty, transactions: [], withdrawals: [], receipts: [], uncles: [] });
  });
});
