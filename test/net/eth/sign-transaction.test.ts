import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recoverAuthorizationAddress, signAuthorization } from '../../../net/eth/authorization.js';
import { InvalidSignatureError } from '../../../net/eth/errors.js';
import { bytesToHex, hexToBytes, type Address, type Hex } from '../../../net/eth/hex.js';
import { keccak256Hex } from '../../../net/eth/keccak.js';
import { signTransaction } from '../../../net/eth/sign-transaction.js';
import { privateKeyToAddress } from '../../../net/eth/signature.js';
import { decodeTransaction } from '../../../net/eth/transaction-decode.js';
import { encodeTransaction, encodeTransactionForSigning, hashTransaction, transactionSigningHash } from '../../../net/eth/transaction-encode.js';
import { recoverTransactionSender } from '../../../net/eth/transaction-sender.js';
import { legacyV, type UnsignedTransaction } from '../../../net/eth/transaction-types.js';

const KEY: Hex = '0x4646464646464646464646464646464646464646464646464646464646464646';
const OTHER_KEY: Hex = '0x8a1f9a8f95be41cd7ccb6168179afb4504aefe388d1e14474d32c45c72ce7b7a';
const TO: Address = '0x3535353535353535353535353535353535353535';
const HIVE_CHAIN_ID = 3503995874084926n;

const accessList = [{ address: TO, storageKeys: [`0x${'00'.repeat(31)}01`, `0x${'ab'.repeat(32)}`] as Hex[] }];
const common = { nonce: 9n, gas: 21000n, value: 10n ** 18n, input: '0xdeadbeef' as Hex };

function unsignedOfEveryType(): [string, UnsignedTransaction][] {
  const authorization = signAuthorization({ chainId: HIVE_CHAIN_ID, address: TO, nonce: 4n }, OTHER_KEY);
  return [
    ['legacy without EIP-155', { type: 'legacy', ...common, gasPrice: 20_000_000_000n, to: TO }],
    ['legacy with EIP-155 (large chain id)', { type: 'legacy', ...common, chainId: HIVE_CHAIN_ID, gasPrice: 20_000_000_000n, to: TO }],
    ['legacy contract creation', { type: 'legacy', ...common, chainId: 1n, gasPrice: 1n, to: null }],
    ['EIP-2930', { type: 'eip2930', ...common, chainId: 1n, gasPrice: 7n, to: TO, accessList }],
    ['EIP-1559', { type: 'eip1559', ...common, chainId: 1n, maxPriorityFeePerGas: 2n, maxFeePerGas: 30_000_000_000n, to: TO, accessList }],
    ['EIP-1559 contract creation', { type: 'eip1559', ...common, chainId: 1n, maxPriorityFeePerGas: 0n, maxFeePerGas: 1n, to: null, accessList: [] }],
    ['EIP-4844', {
      type: 'eip4844', ...common, chainId: 1n, maxPriorityFeePerGas: 2n, maxFeePerGas: 3n, to: TO, accessList,
      maxFeePerBlobGas: 10n ** 10n, blobVersionedHashes: [`0x01${'11'.repeat(31)}`, `0x01${'22'.repeat(31)}`],
    }],
    ['EIP-7702', {
      type: 'eip7702', ...common, chainId: HIVE_CHAIN_ID, maxPriorityFeePerGas: 2n, maxFeePerGas: 3n, to: TO, accessList: [],
      authorizationList: [authorization],
    }],
  ];
}

describe('signTransaction', () => {
  it('reproduces the EIP-155 example (signing data, signing hash, v, r, s and raw transaction)', () => {
    const tx = signTransaction({ type: 'legacy', nonce: 9n, gasPrice: 20n * 10n ** 9n, gas: 21000n, to: TO, value: 10n ** 18n, input: '0x', chainId: 1n }, KEY);
    assert.equal(bytesToHex(encodeTransactionForSigning(tx)), '0xec098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a764000080018080');
    assert.equal(bytesToHex(transactionSigningHash(tx)), '0xdaf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53');
    assert.equal(tx.type === 'legacy' && legacyV(tx), 37n);
    assert.equal(tx.r, 18515461264373351373200002665853028612451056578545711640558177340181847433846n);
    assert.equal(tx.s, 46948507304638947509940763649030358759909902576025900602547168820602576006531n);
    assert.equal(bytesToHex(encodeTransaction(tx)),
      '0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83');
    assert.equal(recoverTransactionSender(tx), '0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f');
  });

  for (const [name, unsigned] of unsignedOfEveryType()) {
    it(`${name}: sign → encode → decode → recover round-trips`, () => {
      const signed = signTransaction(unsigned, KEY);
      const bytes = encodeTransaction(signed);
      if (unsigned.type !== 'legacy') assert.equal(bytes[0], { eip2930: 1, eip1559: 2, eip4844: 3, eip7702: 4 }[unsigned.type]);
      else assert.ok(bytes[0]! >= 0xc0);
      const decoded = decodeTransaction(bytes);
      assert.deepEqual(decoded, signed);
      assert.equal(recoverTransactionSender(decoded), privateKeyToAddress(KEY));
      assert.equal(hashTransaction(decoded), keccak256Hex(bytes));
      assert.deepEqual(signTransaction(unsigned, KEY), signed, 'signing is deterministic');
      assert.ok(signed.s <= 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n, 'low s');
    });
  }

  it('a changed field recovers a different sender', () => {
    const signed = signTransaction(unsignedOfEveryType()[4]![1], KEY);
    assert.notEqual(recoverTransactionSender({ ...signed, value: signed.value + 1n }), privateKeyToAddress(KEY));
  });

  it('the EIP-7702 authorization recovers its signer', () => {
    const auth = signAuthorization({ chainId: 0n, address: TO, nonce: 0n }, OTHER_KEY);
    assert.equal(recoverAuthorizationAddress(auth), privateKeyToAddress(OTHER_KEY));
    assert.notEqual(recoverAuthorizationAddress({ ...auth, nonce: 1n }), privateKeyToAddress(OTHER_KEY));
  });

  it('rejects an invalid private key and an unrecoverable signature', () => {
    const unsigned = unsignedOfEveryType()[0]![1];
    assert.throws(() => signTransaction(unsigned, `0x${'00'.repeat(32)}`), InvalidSignatureError);
    assert.throws(() => signTransaction(unsigned, hexToBytes(`0x${'ff'.repeat(32)}`)), InvalidSignatureError);
    const signed = signTransaction(unsigned, KEY);
    assert.throws(() => recoverTransactionSender({ ...signed, r: 0n }), (error: unknown) =>
      error instanceof InvalidSignatureError && error.name === 'InvalidSignatureError' && /r=0/.test(error.message));
  });
});
