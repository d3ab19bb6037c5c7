import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidHexError, InvalidSignatureError, RlpDecodeError, UnsupportedTransactionTypeError } from '../../../net/eth/errors.js';
import { bytesToHex, concatBytes, hexToBytes } from '../../../net/eth/hex.js';
import { encodeRlp, type RlpInput } from '../../../net/eth/rlp.js';
import { decodeTransaction, transactionFromBodyItem } from '../../../net/eth/transaction-decode.js';

const TO = hexToBytes(`0x${'35'.repeat(20)}`);
const legacyFields = (v: bigint): RlpInput[] => [9n, 1n, 21000n, TO, 1n, new Uint8Array(0), v, 1n, 1n];
const feeMarketFields = (): RlpInput[] => [1n, 0n, 1n, 2n, 21000n, TO, 0n, new Uint8Array(0), []];
const typed = (type: number, fields: RlpInput[]) => concatBytes(Uint8Array.of(type), encodeRlp(fields));

describe('transaction decoding errors', () => {
  it('an unknown type byte is UnsupportedTransactionTypeError naming the type', () => {
    assert.throws(() => decodeTransaction(typed(0x05, feeMarketFields())), (error: unknown) =>
      error instanceof UnsupportedTransactionTypeError && error.name === 'UnsupportedTransactionTypeError' && error.typeByte === 5 && /0x05/.test(error.message));
  });

  it('legacy v other than 27/28 or >= 35 is an invalid signature', () => {
    assert.throws(() => decodeTransaction(encodeRlp(legacyFields(29n))), (error: unknown) =>
      error instanceof InvalidSignatureError && /legacy v 29/.test(error.message));
  });

  it('legacy v decodes chain id and parity (27/28 and EIP-155)', () => {
    const pre155 = decodeTransaction(encodeRlp(legacyFields(28n)));
    assert.equal(pre155.type === 'legacy' && pre155.chainId, undefined);
    assert.equal(pre155.yParity, 1);
    const eip155 = decodeTransaction(encodeRlp(legacyFields(38n)));
    assert.equal(eip155.type === 'legacy' && eip155.chainId, 1n);
    assert.equal(eip155.yParity, 1);
  });

  it('a typed payload with the wrong field count names the type and the count', () => {
    assert.throws(() => decodeTransaction(typed(0x02, [...feeMarketFields(), 0n, 1n])), (error: unknown) =>
      error instanceof RlpDecodeError && /EIP-1559 transaction: expected 12 fields, got 11/.test(error.message));
  });

  it('an EIP-4844 transaction without a recipient is rejected on field to', () => {
    const fields = feeMarketFields();
    fields[5] = new Uint8Array(0);
    assert.throws(() => decodeTransaction(typed(0x03, [...fields, 1n, [], 0n, 1n, 1n])), (error: unknown) =>
      error instanceof RlpDecodeError && /field to: expected 20 bytes, got 0/.test(error.message));
  });

  it('a yParity above 1 is rejected', () => {
    assert.throws(() => decodeTransaction(typed(0x02, [...feeMarketFields(), 2n, 1n, 1n])), /field yParity: expected 0 or 1, got 2/);
  });

  it('a malformed access list entry names its index', () => {
    const fields = feeMarketFields();
    fields[8] = [[TO]];
    assert.throws(() => decodeTransaction(typed(0x02, [...fields, 0n, 1n, 1n])), /accessList\[0\] is not \[address, storageKeys\]/);
  });

  it('a non-canonical nonce is rejected', () => {
    const fields = legacyFields(27n);
    fields[0] = hexToBytes('0x0009');
    assert.throws(() => decodeTransaction(encodeRlp(fields)), /field nonce: non-canonical integer/);
  });

  it('in a block body a legacy transaction must be a list, not a byte string', () => {
    assert.throws(() => transactionFromBodyItem(encodeRlp(legacyFields(27n))), /must be an RLP list/);
    assert.equal(transactionFromBodyItem(typed(0x02, [...feeMarketFields(), 0n, 1n, 1n])).type, 'eip1559');
  });

  it('empty input and a byte in 0x80..0xbf are rejected', () => {
    assert.throws(() => decodeTransaction(new Uint8Array(0)), /empty input/);
    assert.throws(() => decodeTransaction(hexToBytes('0x81')), /neither a type nor a list/);
  });

  it('hex helpers reject odd lengths, bad digits and wrong sizes', () => {
    assert.throws(() => hexToBytes('0x123'), InvalidHexError);
    assert.throws(() => hexToBytes('0xzz'), InvalidHexError);
    assert.throws(() => hexToBytes('abcd'), InvalidHexError);
    assert.throws(() => hexToBytes('0xabcd', 3), /expected 3 bytes, got 2/);
    assert.equal(bytesToHex(hexToBytes('0xABcd')), '0xabcd');
  });
});
