/**
 * Receipts. Consensus form (receipts trie, eth/66-68): `type || rlp([status, cumulativeGasUsed, logsBloom, logs])`,
 * no prefix for legacy. eth/69 form (also the fixtures' storage form): `rlp([type, status, cumulativeGasUsed,
 * logs])`, without the bloom, which is recomputed from the logs. Before Byzantium (EIP-658) the status field held
 * the 32-byte intermediate state root instead: such a receipt has `postState`, and its `status` says nothing.
 */
import { logsBloom } from './bloom.js';
import { InvalidFieldError, RlpDecodeError, UnsupportedTransactionTypeError } from './errors.js';
import { fixedBytes, uintField } from './field-bytes.js';
import { concatBytes, type Hex } from './hex.js';
import { logFromRlp, logToRlp, type Log } from './log.js';
import { decodeRlpList, encodeRlp, RlpFields, type RlpInput, type RlpItem, type RlpList } from './rlp.js';
import { TRANSACTION_TYPE_BYTE, type TransactionType } from './transaction-types.js';

export type ReceiptStatus = 'success' | 'reverted';

export interface Receipt {
  type: TransactionType;
  /** Meaningless when `postState` is set (a pre-Byzantium receipt records no outcome; JSON-RPC shows `root`). */
  status: ReceiptStatus;
  /** Pre-Byzantium only: the state root after the transaction, in place of the status. */
  postState?: Hex;
  cumulativeGasUsed: bigint;
  logsBloom: Hex;
  logs: readonly Log[];
}

const TYPE_BY_BYTE = new Map<number, TransactionType>(
  Object.entries(TRANSACTION_TYPE_BYTE).map(([name, byte]) => [byte, name as TransactionType]),
);

/** The transaction type of a receipt's type byte; an unknown one is refused. */
export function typeFromByte(byte: number): TransactionType {
  const type = TYPE_BY_BYTE.get(byte);
  if (type === undefined) throw new UnsupportedTransactionTypeError(byte);
  return type;
}

/** The status field: a status bit, or (pre-Byzantium) a 32-byte state root. */
function outcomeFrom(f: RlpFields, index: number): Pick<Receipt, 'status' | 'postState'> {
  if (f.bytes(index).length === 32) return { status: 'success', postState: f.fixed(index, 32) };
  return { status: f.bit(index) === 1 ? 'success' : 'reverted' };
}

function logsFrom(list: RlpList, subject: string): Log[] {
  return list.map((item, i) => logFromRlp(item, `${subject} log ${i}`));
}

function outcomeField(receipt: Receipt): RlpInput {
  if (receipt.postState !== undefined) return fixedBytes(receipt.postState, 32, 'receipt', 'postState');
  const { status } = receipt;
  if (status !== 'success' && status !== 'reverted') throw new InvalidFieldError('receipt', 'status', `unknown status ${String(status)}`);
  return status === 'success' ? 1n : 0n;
}

/** The consensus encoding: what the receipts trie stores. */
export function encodeReceipt(receipt: Receipt): Uint8Array {
  const body = encodeRlp([
    outcomeField(receipt),
    uintField(receipt.cumulativeGasUsed, 'receipt', 'cumulativeGasUsed', 64),
    fixedBytes(receipt.logsBloom, 256, 'receipt', 'logsBloom'),
    receipt.logs.map(logToRlp),
  ]);
  const typeByte = TRANSACTION_TYPE_BYTE[receipt.type];
  return typeByte === 0 ? body : concatBytes(Uint8Array.of(typeByte), body);
}

export function decodeReceipt(bytes: Uint8Array): Receipt {
  const first = bytes[0];
  if (first === undefined) throw new RlpDecodeError('receipt', 'empty input');
  const typed = first < 0xc0;
  const type = typed ? typeFromByte(first) : 'legacy';
  const subject = `${type} receipt`;
  const list = decodeRlpList(typed ? bytes.subarray(1) : bytes, subject, [4]);
  const f = new RlpFields(list, subject, ['status', 'cumulativeGasUsed', 'logsBloom', 'logs']);
  return {
    type,
    ...outcomeFrom(f, 0),
    cumulativeGasUsed: f.quantity(1, 8),
    logsBloom: f.fixed(2, 256),
    logs: logsFrom(f.list(3), subject),
  };
}

/**
 * One eth/69 receipt `[type, status, cumulativeGasUsed, logs]`; the bloom, which this form does not carry, is
 * computed from the logs when first read (an enumerable getter, so spreads, structured clones and JSON see it):
 * verification reads it, processors that only need gas or logs never pay for it.
 */
export function receiptFromEth69(item: RlpItem): Receipt {
  const subject = 'eth/69 receipt';
  if (!Array.isArray(item) || item.length !== 4) throw new RlpDecodeError(subject, 'expected [type, status, cumulativeGasUsed, logs]');
  const f = new RlpFields(item, subject, ['type', 'status', 'cumulativeGasUsed', 'logs']);
  const logs = logsFrom(f.list(3), subject);
  let bloom: Hex | undefined;
  return {
    type: typeFromByte(Number(f.quantity(0, 1))),
    ...outcomeFrom(f, 1),
    cumulativeGasUsed: f.quantity(2, 8),
    get logsBloom(): Hex {
      bloom ??= logsBloom(logs);
      return bloom;
    },
    logs,
  };
}

export function receiptToEth69(receipt: Receipt): RlpInput {
  return [
    BigInt(TRANSACTION_TYPE_BYTE[receipt.type]),
    outcomeField(receipt),
    uintField(receipt.cumulativeGasUsed, 'receipt', 'cumulativeGasUsed', 64),
    receipt.logs.map(logToRlp),
  ];
}

/** A block's receipts as one eth/69 RLP list (the shape of the mainnet fixtures). */
export function decodeEth69Receipts(bytes: Uint8Array): Receipt[] {
  return decodeRlpList(bytes, 'eth/69 receipt list').map(receiptFromEth69);
}

export function encodeEth69Receipts(receipts: readonly Receipt[]): Uint8Array {
  return encodeRlp(receipts.map(receiptToEth69));
}
