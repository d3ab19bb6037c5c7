/**
 * A transaction in a block as execution clients render it (geth's RPCTransaction field order):
 * `gasPrice` is the effective price for fee-market types, `chainId` only for replay-protected
 * legacy transactions, `yParity` only for typed ones.
 */
import type { Address, Hex } from '../../net/eth/hex.js';
import { legacyV, type AccessList, type SignedAuthorization, type Transaction } from '../../net/eth/transaction-types.js';
import { TRANSACTION_TYPE_BYTE } from '../../net/eth/transaction-types.js';
import { array, hexString, object, quantity } from './json-text.js';

export interface TransactionPlace {
  readonly blockHash: Hex;
  readonly blockNumber: number;
  readonly blockTimestamp: number;
  readonly baseFeePerGas: bigint | undefined;
  readonly index: number;
  readonly hash: Hex;
  readonly from: Address;
}

/** What the sender paid per gas: the legacy price, or base fee plus the capped tip. */
export function effectiveGasPrice(tx: Transaction, baseFeePerGas: bigint | undefined): bigint {
  if (tx.type === 'legacy' || tx.type === 'eip2930') return tx.gasPrice;
  if (baseFeePerGas === undefined) return tx.maxFeePerGas;
  const tip = tx.maxFeePerGas - baseFeePerGas;
  return baseFeePerGas + (tx.maxPriorityFeePerGas < tip ? tx.maxPriorityFeePerGas : tip);
}

function accessListJson(list: AccessList): string {
  return array(list.map((entry) => object([['address', hexString(entry.address)], ['storageKeys', array(entry.storageKeys.map(hexString))]])));
}

function authorizationListJson(list: readonly SignedAuthorization[]): string {
  return array(list.map((auth) => object([
    ['chainId', quantity(auth.chainId)], ['address', hexString(auth.address)], ['nonce', quantity(auth.nonce)],
    ['yParity', quantity(auth.yParity)], ['r', quantity(auth.r)], ['s', quantity(auth.s)],
  ])));
}

export function renderTransaction(tx: Transaction, place: TransactionPlace): string {
  const feeMarket = tx.type === 'eip1559' || tx.type === 'eip4844' || tx.type === 'eip7702';
  const typed = tx.type !== 'legacy';
  return object([
    ['blockHash', hexString(place.blockHash)],
    ['blockNumber', quantity(place.blockNumber)],
    ['blockTimestamp', quantity(place.blockTimestamp)],
    ['from', hexString(place.from)],
    ['gas', quantity(tx.gas)],
    ['gasPrice', quantity(effectiveGasPrice(tx, place.baseFeePerGas))],
    ['maxFeePerGas', feeMarket ? quantity(tx.maxFeePerGas) : undefined],
    ['maxPriorityFeePerGas', feeMarket ? quantity(tx.maxPriorityFeePerGas) : undefined],
    ['maxFeePerBlobGas', tx.type === 'eip4844' ? quantity(tx.maxFeePerBlobGas) : undefined],
    ['hash', hexString(place.hash)],
    ['input', hexString(tx.input)],
    ['nonce', quantity(tx.nonce)],
    ['to', tx.to === null ? 'null' : hexString(tx.to)],
    ['transactionIndex', quantity(place.index)],
    ['value', quantity(tx.value)],
    ['type', quantity(TRANSACTION_TYPE_BYTE[tx.type])],
    ['accessList', typed ? accessListJson(tx.accessList) : undefined],
    ['chainId', tx.chainId !== undefined ? quantity(tx.chainId) : undefined],
    ['blobVersionedHashes', tx.type === 'eip4844' ? array(tx.blobVersionedHashes.map(hexString)) : undefined],
    ['authorizationList', tx.type === 'eip7702' ? authorizationListJson(tx.authorizationList) : undefined],
    ['v', quantity(tx.type === 'legacy' ? legacyV(tx) : BigInt(tx.yParity))],
    ['r', quantity(tx.r)],
    ['s', quantity(tx.s)],
    ['yParity', typed ? quantity(tx.yParity) : undefined],
  ]);
}
