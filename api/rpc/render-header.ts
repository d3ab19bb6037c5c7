/**
 * A block header as execution clients render it in JSON-RPC (`eth_getBlockBy*`, `newHeads`): fields in
 * alphabetical order, each fork's fields only when the header has them.
 */
import type { BlockHeader } from '../../net/eth/header.js';
import type { Hex } from '../../net/eth/hex.js';
import { hexString, quantity } from './json-text.js';

/** The header fields as ordered `[name, json]` pairs; `extra` pairs (block-only fields) are merged in by name. */
export function headerFields(header: BlockHeader, hash: Hex, extra: ReadonlyArray<readonly [string, string]> = []): Array<[string, string]> {
  const fields: Array<[string, string]> = [
    ['difficulty', quantity(header.difficulty)],
    ['extraData', hexString(header.extraData)],
    ['gasLimit', quantity(header.gasLimit)],
    ['gasUsed', quantity(header.gasUsed)],
    ['hash', hexString(hash)],
    ['logsBloom', hexString(header.logsBloom)],
    ['miner', hexString(header.miner)],
    ['mixHash', hexString(header.mixHash)],
    ['nonce', hexString(header.nonce)],
    ['number', quantity(header.number)],
    ['parentHash', hexString(header.parentHash)],
    ['receiptsRoot', hexString(header.receiptsRoot)],
    ['sha3Uncles', hexString(header.sha3Uncles)],
    ['stateRoot', hexString(header.stateRoot)],
    ['timestamp', quantity(header.timestamp)],
    ['transactionsRoot', hexString(header.transactionsRoot)],
  ];
  if (header.baseFeePerGas !== undefined) fields.push(['baseFeePerGas', quantity(header.baseFeePerGas)]);
  if (header.withdrawalsRoot !== undefined) fields.push(['withdrawalsRoot', hexString(header.withdrawalsRoot)]);
  if (header.blobGasUsed !== undefined) fields.push(['blobGasUsed', quantity(header.blobGasUsed)]);
  if (header.excessBlobGas !== undefined) fields.push(['excessBlobGas', quantity(header.excessBlobGas)]);
  if (header.parentBeaconBlockRoot !== undefined) fields.push(['parentBeaconBlockRoot', hexString(header.parentBeaconBlockRoot)]);
  if (header.requestsHash !== undefined) fields.push(['requestsHash', hexString(header.requestsHash)]);
  fields.push(...extra.map(([name, value]): [string, string] => [name, value]));
  return fields.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export function renderHeader(header: BlockHeader, hash: Hex): string {
  return `{${headerFields(header, hash).map(([name, value]) => `"${name}":${value}`).join(',')}}`;
}
