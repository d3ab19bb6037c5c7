import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { decodeBlockBody, encodeBlockBody, type BlockBody } from '../../../net/eth/block.js';
import { addBytesToBloom, addValuesToBlooms, logsBloomBytes } from '../../../net/eth/bloom.js';
import { KECCAK_IMPLEMENTATIONS, keccakImplementation, useKeccakImplementation } from '../../../net/eth/keccak-batch.js';
import { BlockVerificationError, RlpDecodeError, UnsupportedTransactionTypeError, type BlockVerificationField } from '../../../net/eth/errors.js';
import { decodeHeader, encodeHeader, hashHeader, type BlockHeader } from '../../../net/eth/header.js';
import { bytesToHex, concatBytes, hexToBytes, type Hash } from '../../../net/eth/hex.js';
import { keccak256 } from '../../../net/eth/keccak.js';
import { decodeEth69Receipts, encodeEth69Receipts, type Receipt } from '../../../net/eth/receipt.js';
import { recoverNatively, recoverWithNoble } from '../../../net/eth/signature.js';
import { nativeSecp256k1 } from '../../../net/eth/secp256k1-native.js';
import { transactionSigningHash } from '../../../net/eth/transaction-encode.js';
import { receiptsRoot } from '../../../net/eth/trie-root.js';
import { verifyBlock } from '../../../net/eth/verify-block.js';
import { verifyBlockMaterialBytes, type BlockMaterialBytes } from '../../../net/eth/verify-material.js';
import { createDevnet } from '../../../net/devnet/index.js';
import { toMaterial } from '../../../actors/sources/material.js';
import { mainnetBlocks, type MainnetBlockFixture } from './fixtures.js';

describe('verifyBlockMaterialBytes: every root and the bloom straight from the bytes', () => {
  it('accepts every mainnet fixture block, with the hash, header and gas verifyBlock gives', async () => {
    const fixtures = mainnetBlocks();
    assert.ok(fixtures.length >= 4);
    for (const fixture of fixtures) {
      const verified = verifyBlockMaterialBytes({ header: fixture.header, body: fixture.body, receipts: fixture.receipts });
      const header = decodeHeader(fixture.header);
      const body = decodeBlockBody(fixture.body);
      const receipts = decodeEth69Receipts(fixture.receipts);
      const reference = await verifyBlock({ header, ...body, receipts });
      assert.equal(verified.hash, reference.hash, fixture.file);
      assert.deepEqual(verified.header, header);
      assert.equal(verified.transactions.length, body.transactions.length);
      assert.deepEqual(verified.cumulativeGasUsed, receipts.map((r) => r.cumulativeGasUsed));
    }
  });

  it('accepts devnet blocks (every transaction type, blob transactions, logs) and agrees with verifyBlock', async () => {
    const devnet = createDevnet({ seed: 'verify-material', transactionsPerBlock: 24, blobTransactionsPerBlock: 3, reorgEvery: 0 });
    let logs = 0;
    let blobs = 0;
    for (let i = 0; i < 4; i++) {
      const step = await devnet.next();
      assert.equal(step.kind, 'block');
      if (step.kind !== 'block') return;
      const material = toMaterial({ header: step.block.header, hash: step.hash, body: step.block, receipts: step.receipts });
      const verified = verifyBlockMaterialBytes({ header: material.header, body: material.body, receipts: material.receipts, expectedHash: step.hash });
      assert.equal(verified.hash, step.hash);
      assert.equal(verified.hash, (await verifyBlock({ ...step.block, receipts: step.receipts })).hash);
      logs += step.receipts.reduce((sum, r) => sum + r.logs.length, 0);
      blobs += step.block.transactions.filter((tx) => tx.type === 'eip4844').length;
    }
    assert.ok(logs > 0, 'the devnet blocks carry logs');
    assert.ok(blobs > 0, 'the devnet blocks carry blob transactions');
  });
});

describe('verifyBlockMaterialBytes names what does not match (mainnet 22431084, its bytes tampered once)', () => {
  let fixture: MainnetBlockFixture;
  let header: BlockHeader;
  let hash: Hash;
  let body: BlockBody;
  let receipts: Receipt[];

  before(() => {
    fixture = mainnetBlocks().find((f) => f.number === 22431084)!;
    header = decodeHeader(fixture.header);
    hash = hashHeader(header);
    body = decodeBlockBody(fixture.body);
    receipts = decodeEth69Receipts(fixture.receipts);
  });

  const complete = (): BlockMaterialBytes => ({ header: fixture.header, body: fixture.body, receipts: fixture.receipts, expectedHash: hash });

  function rejects(input: BlockMaterialBytes, field: BlockVerificationField, expected?: string, actual?: string): void {
    assert.throws(() => verifyBlockMaterialBytes(input), (error: unknown) => {
      assert.ok(error instanceof BlockVerificationError, String(error));
      assert.equal(error.field, field);
      if (expected !== undefined) assert.equal(error.expected, expected);
      if (actual !== undefined) assert.equal(error.actual, actual);
      assert.notEqual(error.expected, error.actual);
      assert.equal(error.blockNumber, header.number);
      assert.match(error.message, new RegExp(`^Block ${header.number} \\(0x[0-9a-f]{64}\\) failed verification: ${field} expected `));
      return true;
    });
  }

  it('accepts the untampered block', () => {
    assert.equal(verifyBlockMaterialBytes(complete()).hash, hash);
  });

  it('hash: a different expected hash', () => {
    rejects({ ...complete(), expectedHash: header.parentHash }, 'hash', header.parentHash, hash);
  });

  it('sha3Uncles: an uncle in a post-merge body', () => {
    rejects({ ...complete(), body: encodeBlockBody({ ...body, uncles: [header] }) }, 'sha3Uncles', header.sha3Uncles);
  });

  it('transactionsRoot: one transaction value changed', () => {
    const transactions = body.transactions.map((tx, i) => (i === 3 ? { ...tx, value: tx.value + 1n } : tx));
    rejects({ ...complete(), body: encodeBlockBody({ ...body, transactions }) }, 'transactionsRoot', header.transactionsRoot);
  });

  it('transactionsRoot: two transactions swapped', () => {
    const transactions = [body.transactions[1]!, body.transactions[0]!, ...body.transactions.slice(2)];
    rejects({ ...complete(), body: encodeBlockBody({ ...body, transactions }) }, 'transactionsRoot', header.transactionsRoot);
  });

  it('withdrawalsRoot: one withdrawal amount changed', () => {
    const withdrawals = body.withdrawals!.map((w, i) => (i === 0 ? { ...w, amount: w.amount + 1n } : w));
    rejects({ ...complete(), body: encodeBlockBody({ ...body, withdrawals }) }, 'withdrawalsRoot', header.withdrawalsRoot);
  });

  it('withdrawalsRoot: withdrawals missing for a Shanghai-or-later header', () => {
    const { withdrawals: _, ...withoutWithdrawals } = body;
    rejects({ ...complete(), body: encodeBlockBody(withoutWithdrawals) }, 'withdrawalsRoot', header.withdrawalsRoot, 'absent');
  });

  it('blobGasUsed: a header claiming one blob more than its transactions carry', () => {
    const tampered = { ...header, blobGasUsed: header.blobGasUsed! + 131072n };
    rejects({ ...complete(), header: encodeHeader(tampered), expectedHash: undefined }, 'blobGasUsed', String(tampered.blobGasUsed), String(header.blobGasUsed));
  });

  it('receiptCount: one receipt missing', () => {
    rejects({ ...complete(), receipts: encodeEth69Receipts(receipts.slice(0, -1)) }, 'receiptCount', String(receipts.length), String(receipts.length - 1));
  });

  it('receiptsRoot: one receipt status flipped', () => {
    const tampered = receipts.map((r, i) => (i === 0 ? { ...r, status: r.status === 'success' ? 'reverted' as const : 'success' as const } : r));
    rejects({ ...complete(), receipts: encodeEth69Receipts(tampered) }, 'receiptsRoot', header.receiptsRoot);
  });

  it('receiptsRoot: one log topic changed (the recomputed bloom and the logs both change the receipt)', () => {
    const index = receipts.findIndex((r) => r.logs.some((log) => log.topics.length > 0));
    const tampered = receipts.map((r, i) => (i !== index ? r : {
      ...r, logs: r.logs.map((log, j) => (j === 0 ? { ...log, topics: [`0x${'ab'.repeat(32)}` as const, ...log.topics.slice(1)] } : log)),
    }));
    rejects({ ...complete(), receipts: encodeEth69Receipts(tampered) }, 'receiptsRoot', header.receiptsRoot);
  });

  it('receiptsRoot: one cumulativeGasUsed changed', () => {
    const tampered = receipts.map((r, i) => (i === 1 ? { ...r, cumulativeGasUsed: r.cumulativeGasUsed + 1n } : r));
    rejects({ ...complete(), receipts: encodeEth69Receipts(tampered) }, 'receiptsRoot', header.receiptsRoot);
  });

  it('logsBloom: a header bloom that is not the OR of the receipt blooms', () => {
    const tampered = { ...header, logsBloom: `0x${'ff'.repeat(256)}` as const };
    rejects({ ...complete(), header: encodeHeader(tampered), expectedHash: undefined }, 'logsBloom', tampered.logsBloom, header.logsBloom);
  });

  it('gasUsed: a header gasUsed that is not the last cumulativeGasUsed', () => {
    const tampered = { ...header, gasUsed: header.gasUsed - 1n };
    rejects({ ...complete(), header: encodeHeader(tampered), expectedHash: undefined }, 'gasUsed', String(header.gasUsed - 1n), String(header.gasUsed));
  });

  it('pre-Byzantium receipts (a 32-byte state root in place of the status) frame into the same encoding as encodeReceipt', async () => {
    const withRoots = receipts.map((r, i) => (i % 2 === 0 ? { ...r, postState: `0x${(i + 1).toString(16).padStart(64, '0')}` as const } : r));
    const rehashed = { ...header, receiptsRoot: await receiptsRoot(withRoots) };
    const verified = verifyBlockMaterialBytes({ ...complete(), header: encodeHeader(rehashed), receipts: encodeEth69Receipts(withRoots), expectedHash: undefined });
    assert.equal(verified.hash, hashHeader(rehashed));
    rejects({ ...complete(), receipts: encodeEth69Receipts(withRoots) }, 'receiptsRoot', header.receiptsRoot);
  });

  it('malformed material: trailing bytes, non-canonical RLP, an unknown transaction type', () => {
    assert.throws(() => verifyBlockMaterialBytes({ ...complete(), body: concatBytes(fixture.body, Uint8Array.of(0x80)) }), RlpDecodeError);
    assert.throws(() => verifyBlockMaterialBytes({ ...complete(), receipts: concatBytes(fixture.receipts, Uint8Array.of(0x00)) }), RlpDecodeError);
    // [[0x81 0x05], [], []]: a single byte below 0x80 written with a prefix.
    assert.throws(() => verifyBlockMaterialBytes({ ...complete(), body: Uint8Array.of(0xc5, 0xc2, 0x81, 0x05, 0xc0, 0xc0) }), /non-canonical/);
    // A typed transaction of type 0x05.
    assert.throws(() => verifyBlockMaterialBytes({ ...complete(), body: Uint8Array.of(0xc6, 0xc3, 0x82, 0x05, 0xc0, 0xc0, 0xc0) }), UnsupportedTransactionTypeError);
  });
});

describe('bloom bits of raw values (the cached path)', () => {
  /** The yellow paper's M3:2048, computed here independently of net/eth/bloom.ts. */
  function referenceBloom(values: readonly Uint8Array[]): Uint8Array {
    const bloom = new Uint8Array(256);
    for (const value of values) {
      const hash = keccak256(value);
      for (let i = 0; i < 3; i++) {
        const bit = ((hash[2 * i]! << 8) | hash[2 * i + 1]!) & 2047;
        bloom[255 - (bit >> 3)]! |= 1 << (bit & 7);
      }
    }
    return bloom;
  }

  function cachedBloom(values: readonly Uint8Array[]): Uint8Array {
    const bloom = new Uint8Array(256);
    const packed = concatBytes(...values);
    let offset = 0;
    for (const value of values) {
      addBytesToBloom(bloom, packed, offset, offset + value.length);
      offset += value.length;
    }
    return bloom;
  }

  it('equals the reference on thousands of 20- and 32-byte values, first seen and repeated, colliding in the cache', () => {
    const values = Array.from({ length: 6000 }, (_, i) => keccak256(Uint8Array.of(i & 0xff, i >> 8)).subarray(0, i % 3 === 0 ? 20 : 32));
    for (let round = 0; round < 2; round++) {
      for (let start = 0; start < values.length; start += 40) {
        const group = values.slice(start, start + 40);
        assert.deepEqual(cachedBloom(group), referenceBloom(group));
      }
    }
  });

  for (const implementation of KECCAK_IMPLEMENTATIONS) {
    it(`${implementation}: values batched into several blooms (addValuesToBlooms) equal the reference, repeated within a call and across calls, and the block bloom is their OR`, () => {
      const previous = keccakImplementation();
      useKeccakImplementation(implementation);
      try {
        // 5,000 distinct values (more than the native cache's 4,096 slots, so slots collide and are evicted), each
        // twice in the call: the repeat waits for the hash its first occurrence planned.
        const distinct = Array.from({ length: 5000 }, (_, i) => keccak256(Uint8Array.of(i & 0xff, i >> 8, 9)).subarray(0, i % 4 === 0 ? 20 : 32));
        const values = [...distinct, ...distinct, Uint8Array.of(), keccak256(Uint8Array.of(1)).subarray(0, 7)];
        const packed = concatBytes(...values);
        const groups = 7;
        const triples = new Uint32Array(3 * values.length);
        let offset = 0;
        values.forEach((value, i) => {
          triples.set([offset, value.length, 16 + 256 * (i % groups)], 3 * i);
          offset += value.length;
        });
        for (let call = 0; call < 2; call++) {
          const blooms = new Uint8Array(16 + 256 * groups);
          const block = new Uint8Array(256);
          addValuesToBlooms(packed, triples, values.length, blooms, block);
          for (let g = 0; g < groups; g++) {
            assert.deepEqual(blooms.subarray(16 + 256 * g, 16 + 256 * (g + 1)), referenceBloom(values.filter((_, i) => i % groups === g)), `call ${call}, bloom ${g}`);
          }
          assert.deepEqual(block, referenceBloom(values));
          assert.deepEqual(blooms.subarray(0, 16), new Uint8Array(16));
        }
      } finally {
        useKeccakImplementation(previous);
      }
    });
  }

  it('equals logsBloomBytes for log addresses', () => {
    const addresses = Array.from({ length: 30 }, (_, i) => keccak256(Uint8Array.of(i)).subarray(12));
    assert.deepEqual(cachedBloom(addresses), logsBloomBytes(addresses.map((a) => ({ address: bytesToHex(a), topics: [], data: '0x' as const }))));
  });
});

describe('sender recovery: libsecp256k1 and @noble/curves agree', () => {
  it('recovers the same public key for every transaction of a mainnet block, and both reject an s of zero', { skip: nativeSecp256k1 === null ? 'no prebuilt secp256k1 binding loads here' : false }, () => {
    const fixture = mainnetBlocks().find((f) => f.number === 22431084)!;
    const { transactions } = decodeBlockBody(fixture.body);
    assert.ok(transactions.length > 10);
    for (const tx of transactions) {
      const hash = transactionSigningHash(tx);
      assert.deepEqual(recoverNatively(hash, tx), recoverWithNoble(hash, tx));
    }
    const tx = transactions[0]!;
    const hash = transactionSigningHash(tx);
    assert.throws(() => recoverNatively(hash, { ...tx, s: 0n }));
    assert.throws(() => recoverWithNoble(hash, { ...tx, s: 0n }));
    assert.throws(() => recoverNatively(hexToBytes(`0x${'00'.repeat(32)}`), { ...tx, r: 2n ** 256n - 1n }));
  });
});
