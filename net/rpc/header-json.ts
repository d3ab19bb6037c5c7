/**
 * A JSON-RPC block object's header fields → `BlockHeader`. The fork shape follows the fields present: each
 * optional field (London base fee … Prague requests hash) is taken when the upstream sends it.
 */
import type { BlockHeader } from '../eth/header.js';
import { JsonFields } from './json-fields.js';

export function headerFromJson(block: unknown): BlockHeader {
  const f = new JsonFields(block, 'block');
  const header: BlockHeader = {
    parentHash: f.fixed('parentHash', 32),
    sha3Uncles: f.fixed('sha3Uncles', 32),
    miner: f.address('miner'),
    stateRoot: f.fixed('stateRoot', 32),
    transactionsRoot: f.fixed('transactionsRoot', 32),
    receiptsRoot: f.fixed('receiptsRoot', 32),
    logsBloom: f.fixed('logsBloom', 256),
    difficulty: f.quantity('difficulty'),
    number: f.number('number'),
    gasLimit: f.quantity('gasLimit'),
    gasUsed: f.quantity('gasUsed'),
    timestamp: f.number('timestamp'),
    extraData: f.data('extraData'),
    mixHash: f.fixed('mixHash', 32),
    nonce: f.fixed('nonce', 8),
  };
  const baseFeePerGas = f.optionalQuantity('baseFeePerGas');
  if (baseFeePerGas !== undefined) header.baseFeePerGas = baseFeePerGas;
  const withdrawalsRoot = f.optionalFixed('withdrawalsRoot', 32);
  if (withdrawalsRoot !== undefined) header.withdrawalsRoot = withdrawalsRoot;
  const blobGasUsed = f.optionalQuantity('blobGasUsed');
  if (blobGasUsed !== undefined) header.blobGasUsed = blobGasUsed;
  const excessBlobGas = f.optionalQuantity('excessBlobGas');
  if (excessBlobGas !== undefined) header.excessBlobGas = excessBlobGas;
  const parentBeaconBlockRoot = f.optionalFixed('parentBeaconBlockRoot', 32);
  if (parentBeaconBlockRoot !== undefined) header.parentBeaconBlockRoot = parentBeaconBlockRoot;
  const requestsHash = f.optionalFixed('requestsHash', 32);
  if (requestsHash !== undefined) header.requestsHash = requestsHash;
  return header;
}
