/**
 * Transaction encoding: the canonical (consensus) form `type || rlp(payload)` for typed transactions and
 * `rlp([...])` for legacy ones, the signing payload of each type, the transaction hash and the signing hash.
 */
import { dataBytes, fixedBytes, uintField } from './field-bytes.js';
import { concatBytes, type Address, type Hash } from './hex.js';
import { keccak256, keccak256Hex } from './keccak.js';
import { encodeRlp, type RlpInput } from './rlp.js';
import {
  legacyV,
  TRANSACTION_TYPE_BYTE,
  type AccessList,
  type SignedAuthorization,
  type Transaction,
  type UnsignedTransaction,
} from './transaction-types.js';

const SUBJECT = 'transaction';

function accessListToRlp(accessList: AccessList): RlpInput[] {
  return accessList.map((entry, i) => [
    fixedBytes(entry.address, 20, SUBJECT, `accessList[${i}].address`),
    entry.storageKeys.map((key, j) => fixedBytes(key, 32, SUBJECT, `accessList[${i}].storageKeys[${j}]`)),
  ]);
}

function authorizationListToRlp(list: readonly SignedAuthorization[]): RlpInput[] {
  return list.map((auth, i) => [
    uintField(auth.chainId, SUBJECT, `authorizationList[${i}].chainId`),
    fixedBytes(auth.address, 20, SUBJECT, `authorizationList[${i}].address`),
    uintField(auth.nonce, SUBJECT, `authorizationList[${i}].nonce`, 64),
    uintField(auth.yParity, SUBJECT, `authorizationList[${i}].yParity`, 8),
    uintField(auth.r, SUBJECT, `authorizationList[${i}].r`),
    uintField(auth.s, SUBJECT, `authorizationList[${i}].s`),
  ]);
}

function recipient(to: Address | null): Uint8Array {
  return to === null ? new Uint8Array(0) : fixedBytes(to, 20, SUBJECT, 'to');
}

function uint(value: bigint, field: string, maxBits = 256): bigint {
  return uintField(value, SUBJECT, field, maxBits);
}

/** The payload fields every type signs, in wire order (legacy: the six pre-EIP-155 fields). */
function unsignedFields(tx: UnsignedTransaction): RlpInput[] {
  const nonce = uint(tx.nonce, 'nonce', 64);
  const gas = uint(tx.gas, 'gas', 64);
  const to = recipient(tx.to);
  const value = uint(tx.value, 'value');
  const input = dataBytes(tx.input, SUBJECT, 'input');
  if (tx.type === 'legacy') return [nonce, uint(tx.gasPrice, 'gasPrice'), gas, to, value, input];
  const chainId = uint(tx.chainId, 'chainId');
  const accessList = accessListToRlp(tx.accessList);
  if (tx.type === 'eip2930') return [chainId, nonce, uint(tx.gasPrice, 'gasPrice'), gas, to, value, input, accessList];
  const fees = [uint(tx.maxPriorityFeePerGas, 'maxPriorityFeePerGas'), uint(tx.maxFeePerGas, 'maxFeePerGas')];
  const feeMarket = [chainId, nonce, ...fees, gas, to, value, input, accessList];
  switch (tx.type) {
    case 'eip1559':
      return feeMarket;
    case 'eip4844':
      return [...feeMarket, uint(tx.maxFeePerBlobGas, 'maxFeePerBlobGas'),
        tx.blobVersionedHashes.map((hash, i) => fixedBytes(hash, 32, SUBJECT, `blobVersionedHashes[${i}]`))];
    case 'eip7702':
      return [...feeMarket, authorizationListToRlp(tx.authorizationList)];
  }
}

function typed(type: Exclude<Transaction['type'], 'legacy'>, payload: RlpInput[]): Uint8Array {
  return concatBytes(Uint8Array.of(TRANSACTION_TYPE_BYTE[type]), encodeRlp(payload));
}

function signatureFields(tx: Transaction): RlpInput[] {
  const parity = tx.type === 'legacy' ? legacyV(tx) : uintField(tx.yParity, SUBJECT, 'yParity', 1);
  return [parity, uintField(tx.r, SUBJECT, 'r'), uintField(tx.s, SUBJECT, 's')];
}

/** The canonical encoding: what the transactions trie stores and what the transaction hash is taken over. */
export function encodeTransaction(tx: Transaction): Uint8Array {
  if (tx.type === 'legacy') return encodeRlp([...unsignedFields(tx), ...signatureFields(tx)]);
  return typed(tx.type, [...unsignedFields(tx), ...signatureFields(tx)]);
}

/** A transaction as a block body holds it: a legacy one as its RLP list, a typed one as its canonical bytes. */
export function transactionToBodyItem(tx: Transaction): RlpInput {
  if (tx.type === 'legacy') return [...unsignedFields(tx), ...signatureFields(tx)];
  return encodeTransaction(tx);
}

/** The bytes a sender signs: EIP-155 appends `[chainId, 0, 0]` to legacy fields; typed ones are `type || rlp(fields)`. */
export function encodeTransactionForSigning(tx: UnsignedTransaction): Uint8Array {
  if (tx.type === 'legacy') {
    const fields = unsignedFields(tx);
    return encodeRlp(tx.chainId === undefined ? fields : [...fields, tx.chainId, 0n, 0n]);
  }
  return typed(tx.type, unsignedFields(tx));
}

export function transactionSigningHash(tx: UnsignedTransaction): Uint8Array {
  return keccak256(encodeTransactionForSigning(tx));
}

/** The transaction hash: keccak256 of the canonical encoding. */
export function hashTransaction(tx: Transaction): Hash {
  return keccak256Hex(encodeTransaction(tx));
}
