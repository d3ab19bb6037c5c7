import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { blobsToCommitments, commitmentsToVersionedHashes, getContractAddress, parseGwei, stringToHex, toBlobs, type Hex, type Kzg } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { recoverAuthorizationAddress } from '../../../net/eth/authorization.js';
import { decodeBlockBody } from '../../../net/eth/block.js';
import { bloomMayContain, EMPTY_BLOOM } from '../../../net/eth/bloom.js';
import { BlockVerificationError } from '../../../net/eth/errors.js';
import { decodeHeader, hashHeader } from '../../../net/eth/header.js';
import { bytesToHex } from '../../../net/eth/hex.js';
import { decodeEth69Receipts } from '../../../net/eth/receipt.js';
import { hashTransaction } from '../../../net/eth/transaction-encode.js';
import type { Transaction, TransactionType } from '../../../net/eth/transaction-types.js';
import { receiptsRoot } from '../../../net/eth/trie-root.js';
import { materialFromJson } from '../../../net/rpc/convert.js';
import { PooledBlobRootError, UpstreamFormatError } from '../../../net/rpc/errors.js';
import { ANVIL_CHAIN_ID, startAnvil, type Anvil } from '../../support/anvil.js';
import { clients, loadKzg, LOGGER_INIT_CODE, LOG_TOPIC } from './wallet.js';

type Json = Record<string, unknown>;

/** anvil 1.7.1 roots blob transactions in their pooled form (foundry-rs/foundry#15132); see pooled-blob-root.ts. */
const ANVIL = { pooledBlobRoots: true } as const;

/** An unfunded key: it only signs the EIP-7702 authorization. */
const AUTHORITY_KEY: Hex = `0x${'42'.repeat(32)}`;

describe('upstream blocks convert to verified material (anvil, Prague, every transaction type)', () => {
  let anvil: Anvil;
  let kzg: Kzg;
  let head: number;
  const blobs = [toBlobs({ data: stringToHex('first blob transaction') }), toBlobs({ data: stringToHex('x'.repeat(200_000)) })];
  const sent: { blob: Hex[]; logger: Hex | null; deploy: Hex | null; setCode: Hex | null } = { blob: [], logger: null, deploy: null, setCode: null };

  before(async () => {
    anvil = await startAnvil();
    kzg = await loadKzg();
    const { account, wallet, public: pub } = clients(anvil);
    let nonce = await pub.getTransactionCount({ address: account.address });
    const logger = getContractAddress({ from: account.address, nonce: BigInt(nonce) });
    const to = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
    const fees = { maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: parseGwei('1') };
    await anvil.rpc('evm_setAutomine', [false]);
    sent.deploy = await wallet.sendTransaction({ type: 'legacy', data: LOGGER_INIT_CODE, gas: 200_000n, gasPrice: parseGwei('20'), nonce: nonce++ });
    await wallet.sendTransaction({ type: 'eip2930', to, value: 2n, gas: 50_000n, gasPrice: parseGwei('20'), accessList: [{ address: to, storageKeys: [`0x${'00'.repeat(31)}01`] }], nonce: nonce++ });
    sent.logger = await wallet.sendTransaction({ to: logger, gas: 100_000n, ...fees, nonce: nonce++ });
    sent.blob.push(await wallet.sendTransaction({ to, blobs: blobs[0]!, kzg, maxFeePerBlobGas: parseGwei('30'), gas: 50_000n, ...fees, nonce: nonce++ }));
    await anvil.mine();
    const authority = privateKeyToAccount(AUTHORITY_KEY);
    const authorization = await authority.signAuthorization({ address: logger, chainId: ANVIL_CHAIN_ID, nonce: 0 });
    sent.setCode = await wallet.sendTransaction({ to: authority.address, authorizationList: [authorization], gas: 200_000n, ...fees, nonce: nonce++ });
    sent.blob.push(await wallet.sendTransaction({ to, blobs: blobs[1]!, kzg, maxFeePerBlobGas: parseGwei('30'), gas: 50_000n, ...fees, nonce: nonce++ }));
    await wallet.sendTransaction({ to: logger, gas: 100_000n, ...fees, nonce: nonce++ });
    await anvil.mine();
    await anvil.rpc('evm_setAutomine', [true]);
    const last = await wallet.sendTransaction({ to, value: 1n, type: 'legacy', nonce: nonce++ });
    head = Number((await pub.waitForTransactionReceipt({ hash: last, pollingInterval: 50 })).blockNumber);
  });

  after(async () => {
    await anvil?.stop();
  });

  const fetchJson = async (number: number): Promise<{ block: Json; receipts: Json[] }> => {
    const tag = `0x${number.toString(16)}`;
    const [block, receipts] = await Promise.all([anvil.rpc<Json>('eth_getBlockByNumber', [tag, true]), anvil.rpc<Json[]>('eth_getBlockReceipts', [tag])]);
    return { block, receipts };
  };

  const findTransaction = async (hash: Hex): Promise<{ tx: Transaction; blockNumber: number }> => {
    const receipt = await anvil.rpc<Json>('eth_getTransactionReceipt', [hash]);
    const blockNumber = Number(receipt.blockNumber);
    const { block, receipts } = await fetchJson(blockNumber);
    const converted = await materialFromJson(block, receipts, ANVIL);
    const tx = converted.transactions.find((t) => hashTransaction(t) === hash);
    assert.ok(tx, `transaction ${hash} is in block ${blockNumber}`);
    return { tx, blockNumber };
  };

  it('every block converts, verifies, and re-encodes to bytes whose hash and roots match the upstream', async () => {
    const types = new Set<TransactionType>();
    for (let n = 0; n <= head; n += 1) {
      const { block, receipts } = await fetchJson(n);
      const converted = await materialFromJson(block, receipts, ANVIL);
      const header = decodeHeader(converted.material.header);
      assert.equal(hashHeader(header), block.hash, `block ${n}: stored header hashes to the upstream hash`);
      assert.equal(bytesToHex(converted.material.hash), block.hash);
      assert.equal(converted.material.number, n);
      const body = decodeBlockBody(converted.material.body);
      assert.deepEqual(body.transactions.map(hashTransaction), (block.transactions as Json[]).map((tx) => tx.hash), `block ${n}: transaction hashes`);
      assert.deepEqual(body.withdrawals, [], 'Prague blocks carry an (empty) withdrawals list');
      const stored = decodeEth69Receipts(converted.material.receipts!);
      assert.equal(await receiptsRoot(stored), header.receiptsRoot, `block ${n}: stored receipts re-encode to the receipts root`);
      for (const tx of body.transactions) types.add(tx.type);
    }
    assert.deepEqual([...types].sort(), ['eip1559', 'eip2930', 'eip4844', 'eip7702', 'legacy']);
  });

  it('by default a block whose root covers pooled blob transactions is refused, saying why; blocks without blobs pass', async () => {
    const receipt = await anvil.rpc<Json>('eth_getTransactionReceipt', [sent.blob[0]]);
    const { block, receipts } = await fetchJson(Number(receipt.blockNumber));
    await assert.rejects(materialFromJson(block, receipts), (error: unknown) => {
      assert.ok(error instanceof PooledBlobRootError, String(error));
      assert.equal(error.field, 'transactionsRoot');
      assert.match(error.message, /pooledBlobRoots/);
      return true;
    });
    const plain = await fetchJson(head);
    assert.equal((plain.block.transactions as Json[]).length, 1, 'the last block holds one legacy transaction');
    await materialFromJson(plain.block, plain.receipts);
  });

  it('with pooledBlobRoots a changed sidecar is still refused', async () => {
    const receipt = await anvil.rpc<Json>('eth_getTransactionReceipt', [sent.blob[0]]);
    const { block, receipts } = await fetchJson(Number(receipt.blockNumber));
    const bad = structuredClone(block);
    const blobTx = (bad.transactions as Json[]).find((tx) => tx.type === '0x3')!;
    blobTx.proofs = [(blobTx.proofs as string[])[0]!.replace(/.$/, (c) => (c === '0' ? '1' : '0'))];
    await assert.rejects(materialFromJson(bad, receipts, ANVIL), (error: unknown) => error instanceof BlockVerificationError && error.field === 'transactionsRoot');
  });

  it('blob transactions round-trip with their versioned hashes and the header counts their blob gas', async () => {
    for (const [i, hash] of sent.blob.entries()) {
      const { tx, blockNumber } = await findTransaction(hash);
      assert.equal(tx.type, 'eip4844');
      if (tx.type !== 'eip4844') return;
      const expected = commitmentsToVersionedHashes({ commitments: blobsToCommitments({ blobs: blobs[i]!, kzg }) });
      assert.deepEqual(tx.blobVersionedHashes, expected, `blob transaction ${i}: versioned hashes`);
      assert.equal(tx.maxFeePerBlobGas, parseGwei('30'));
      const { block, receipts } = await fetchJson(blockNumber);
      const converted = await materialFromJson(block, receipts, ANVIL);
      const body = decodeBlockBody(converted.material.body);
      const stored = body.transactions.find((t) => hashTransaction(t) === hash);
      assert.ok(stored?.type === 'eip4844' && stored.blobVersionedHashes.length === expected.length, 'the stored body keeps the versioned hashes');
      const blobCount = converted.transactions.reduce((sum, t) => sum + (t.type === 'eip4844' ? t.blobVersionedHashes.length : 0), 0);
      assert.equal(converted.header.blobGasUsed, BigInt(blobCount) * 131072n);
    }
    assert.equal(blobs[1]!.length, 2, 'the second blob transaction carries two blobs');
  });

  it('receipts with logs re-encode to the receipts root and the header bloom', async () => {
    const receipt = await anvil.rpc<Json>('eth_getTransactionReceipt', [sent.logger]);
    const { block, receipts } = await fetchJson(Number(receipt.blockNumber));
    const converted = await materialFromJson(block, receipts, ANVIL);
    const withLog = converted.receipts!.find((r) => r.logs.length > 0);
    assert.ok(withLog, 'the logger call emitted a log');
    assert.deepEqual(withLog.logs[0]!.topics, [LOG_TOPIC]);
    assert.notEqual(converted.header.logsBloom, EMPTY_BLOOM);
    assert.ok(bloomMayContain(converted.header.logsBloom, LOG_TOPIC));
    assert.ok(converted.receipts!.length >= 4, 'several receipts in one block (cumulative gas across transactions)');
  });

  it('legacy, contract-creation and set-code transactions keep chain id, recipient and authorizations', async () => {
    const deploy = (await findTransaction(sent.deploy!)).tx;
    assert.equal(deploy.type, 'legacy');
    assert.equal(deploy.to, null, 'contract creation');
    assert.equal(deploy.type === 'legacy' ? deploy.chainId : undefined, BigInt(ANVIL_CHAIN_ID), 'EIP-155 chain id from v');
    const setCode = (await findTransaction(sent.setCode!)).tx;
    assert.equal(setCode.type, 'eip7702');
    if (setCode.type !== 'eip7702') return;
    assert.equal(setCode.authorizationList.length, 1);
    assert.equal(recoverAuthorizationAddress(setCode.authorizationList[0]!), privateKeyToAccount(AUTHORITY_KEY).address.toLowerCase());
  });

  describe('tampered upstream JSON is refused, naming what does not match', () => {
    let block: Json;
    let receipts: Json[];
    before(async () => {
      const receipt = await anvil.rpc<Json>('eth_getTransactionReceipt', [sent.logger]);
      ({ block, receipts } = await fetchJson(Number(receipt.blockNumber)));
    });
    const clone = <T>(value: T): T => structuredClone(value);
    const rejectsWith = (field: string) => (error: unknown) => {
      assert.ok(error instanceof BlockVerificationError, String(error));
      assert.equal(error.field, field);
      return true;
    };

    it('a changed header field breaks the block hash', async () => {
      const bad = clone(block);
      bad.stateRoot = `0x${'11'.repeat(32)}`;
      await assert.rejects(materialFromJson(bad, receipts, ANVIL), rejectsWith('hash'));
    });
    it('a changed transaction breaks the transactions root', async () => {
      const bad = clone(block);
      (bad.transactions as Json[])[1]!.value = '0x3';
      await assert.rejects(materialFromJson(bad, receipts, ANVIL), rejectsWith('transactionsRoot'));
    });
    it('a changed receipt or log breaks the receipts root', async () => {
      const gas = clone(receipts);
      gas[0]!.cumulativeGasUsed = '0x1';
      await assert.rejects(materialFromJson(block, gas, ANVIL), rejectsWith('receiptsRoot'));
      const log = clone(receipts);
      const withLog = log.find((r) => (r.logs as Json[]).length > 0)!;
      (withLog.logs as Json[])[0]!.data = '0x01';
      await assert.rejects(materialFromJson(block, log, ANVIL), rejectsWith('receiptsRoot'));
    });
    it('a missing receipt is counted', async () => {
      await assert.rejects(materialFromJson(block, receipts.slice(1), ANVIL), rejectsWith('receiptCount'));
    });
    it('missing withdrawals break the withdrawals root', async () => {
      const bad = clone(block);
      delete bad.withdrawals;
      await assert.rejects(materialFromJson(bad, receipts, ANVIL), rejectsWith('withdrawalsRoot'));
    });
    it('malformed JSON names the object and the field', async () => {
      const bad = clone(block);
      (bad.transactions as Json[])[0]!.gas = 12;
      await assert.rejects(materialFromJson(bad, receipts, ANVIL), (error: unknown) => {
        assert.ok(error instanceof UpstreamFormatError, String(error));
        assert.equal(error.subject, 'transaction 0');
        assert.equal(error.field, 'gas');
        return true;
      });
      const hashesOnly = await anvil.rpc<Json>('eth_getBlockByNumber', [block.number, false]);
      await assert.rejects(materialFromJson(hashesOnly, receipts, ANVIL), (error: unknown) => error instanceof UpstreamFormatError && error.field === 'transactions');
    });
  });
});
