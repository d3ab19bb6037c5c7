/**
 * A JSON-RPC receipt object → `Receipt`: post-Byzantium with `status`, or pre-Byzantium with `root` (the state root
 * after the transaction). The bloom is recomputed from the logs rather than taken from the JSON, so the
 * receipts-root check proves the logs themselves.
 */
import { EMPTY_BLOOM, logsBloom } from '../eth/bloom.js';
import type { Log } from '../eth/log.js';
import type { Receipt } from '../eth/receipt.js';
import { TRANSACTION_TYPE_BYTE, type TransactionType } from '../eth/transaction-types.js';
import { UpstreamFormatError } from './errors.js';
import { JsonFields } from './json-fields.js';

const TYPE_BY_NUMBER = new Map<number, TransactionType>(
  Object.entries(TRANSACTION_TYPE_BYTE).map(([name, byte]) => [byte, name as TransactionType]),
);

/**
 * `bloom` false: the receipt's `logsBloom` is left empty, for a caller that only encodes the eth/69 form (which has
 * no bloom) and verifies the bytes, where each receipt's bloom is computed from its logs.
 */
export function receiptFromJson(json: unknown, index = 0, bloom = true): Receipt {
  const f = new JsonFields(json, `receipt ${index}`);
  const typeNumber = f.has('type') ? f.number('type') : 0;
  const type = TYPE_BY_NUMBER.get(typeNumber);
  if (type === undefined) throw f.invalid('type', 'a transaction type 0x0 … 0x4', f.raw('type'));
  const logs = f.list('logs').map((log, i) => logFromJson(log, `${f.subject} log ${i}`));
  const common = { type, cumulativeGasUsed: f.quantity('cumulativeGasUsed'), logsBloom: bloom ? logsBloom(logs) : EMPTY_BLOOM, logs };
  if (!f.has('status')) {
    if (!f.has('root')) throw new UpstreamFormatError(f.subject, 'status', 'missing, and no pre-Byzantium root either');
    return { ...common, status: 'success', postState: f.fixed('root', 32) };
  }
  const status = f.quantity('status');
  if (status > 1n) throw f.invalid('status', '0x0 or 0x1', f.raw('status'));
  return { ...common, status: status === 1n ? 'success' : 'reverted' };
}

function logFromJson(json: unknown, subject: string): Log {
  const f = new JsonFields(json, subject);
  return { address: f.address('address'), topics: f.fixedList('topics', 32), data: f.data('data') };
}
