import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bigintToQuantity } from '../../../net/eth/hex.js';
import { signTransaction } from '../../../net/eth/sign-transaction.js';
import { hashTransaction } from '../../../net/eth/transaction-encode.js';
import { legacyV, type LegacyTransaction } from '../../../net/eth/transaction-types.js';
import { UpstreamFormatError } from '../../../net/rpc/errors.js';
import { receiptFromJson } from '../../../net/rpc/receipt-json.js';
import { transactionFromJson } from '../../../net/rpc/transaction-json.js';

const KEY = `0x${'11'.repeat(32)}` as const;
const TO = `0x${'22'.repeat(20)}` as const;

function legacyJson(tx: LegacyTransaction): Record<string, unknown> {
  return {
    type: '0x0', nonce: bigintToQuantity(tx.nonce), gasPrice: bigintToQuantity(tx.gasPrice), gas: bigintToQuantity(tx.gas), to: tx.to,
    value: bigintToQuantity(tx.value), input: tx.input, v: bigintToQuantity(legacyV(tx)), r: bigintToQuantity(tx.r), s: bigintToQuantity(tx.s),
  };
}

const rejectsField = (field: string) => (error: unknown) => {
  assert.ok(error instanceof UpstreamFormatError, String(error));
  assert.equal(error.field, field);
  return true;
};

describe('transactionFromJson edge cases (pure)', () => {
  const unprotected = signTransaction({ type: 'legacy', nonce: 7n, gasPrice: 10n, gas: 21000n, to: TO, value: 5n, input: '0x' }, KEY) as LegacyTransaction;
  const protectedTx = signTransaction({ type: 'legacy', chainId: 1n, nonce: 7n, gasPrice: 10n, gas: 21000n, to: TO, value: 5n, input: '0x' }, KEY) as LegacyTransaction;

  it('a pre-EIP-155 legacy transaction (v 27/28) has no chain id and keeps its hash', () => {
    const tx = transactionFromJson(legacyJson(unprotected));
    assert.equal(tx.type === 'legacy' ? tx.chainId : 'typed', undefined);
    assert.equal(hashTransaction(tx), hashTransaction(unprotected));
  });

  it('an EIP-155 legacy transaction gets chain id and parity from v, and a contradicting chainId field is refused', () => {
    const tx = transactionFromJson({ ...legacyJson(protectedTx), chainId: '0x1' });
    assert.equal(tx.type === 'legacy' ? tx.chainId : undefined, 1n);
    assert.equal(hashTransaction(tx), hashTransaction(protectedTx));
    assert.throws(() => transactionFromJson({ ...legacyJson(protectedTx), chainId: '0x5' }), rejectsField('chainId'));
  });

  it('a typed transaction without yParity takes it from v; missing type means legacy', () => {
    const signed = signTransaction({ type: 'eip1559', chainId: 1n, nonce: 0n, maxPriorityFeePerGas: 1n, maxFeePerGas: 2n, gas: 21000n, to: TO, value: 0n, input: '0x', accessList: [] }, KEY);
    const json = {
      type: '0x2', chainId: '0x1', nonce: '0x0', maxPriorityFeePerGas: '0x1', maxFeePerGas: '0x2', gas: '0x5208', to: TO, value: '0x0', input: '0x',
      accessList: [], v: `0x${signed.yParity}`, r: bigintToQuantity(signed.r), s: bigintToQuantity(signed.s),
    };
    assert.equal(hashTransaction(transactionFromJson(json)), hashTransaction(signed));
    const { type: _type, ...untyped } = legacyJson(unprotected);
    assert.equal(transactionFromJson(untyped).type, 'legacy');
  });

  it('unknown types, bad quantities and bad parities name the field', () => {
    assert.throws(() => transactionFromJson({ ...legacyJson(unprotected), type: '0x7e' }), rejectsField('type'));
    assert.throws(() => transactionFromJson({ ...legacyJson(unprotected), nonce: 7 }), rejectsField('nonce'));
    assert.throws(() => transactionFromJson({ ...legacyJson(unprotected), v: '0x1f' }), rejectsField('v'));
    assert.throws(() => transactionFromJson({ ...legacyJson(unprotected), to: '0x1234' }), rejectsField('to'));
  });

  it('receipts: a pre-Byzantium receipt keeps its root, one with neither status nor root is refused; the bloom is recomputed from the logs', () => {
    assert.equal(receiptFromJson({ type: '0x0', root: `0x${'01'.repeat(32)}`, cumulativeGasUsed: '0x1', logs: [] }).postState, `0x${'01'.repeat(32)}`);
    assert.throws(() => receiptFromJson({ type: '0x0', cumulativeGasUsed: '0x1', logs: [] }), rejectsField('status'));
    const receipt = receiptFromJson({ type: '0x2', status: '0x1', cumulativeGasUsed: '0x1', logs: [], logsBloom: `0x${'ff'.repeat(256)}` });
    assert.equal(receipt.logsBloom, `0x${'00'.repeat(256)}`);
  });
});
