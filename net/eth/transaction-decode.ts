/**
 * Transaction decoding from the canonical form (`type || rlp(payload)` or a legacy RLP list) and from block bodies,
 * where a legacy transaction is an RLP list and a typed one is a byte string holding its canonical encoding.
 */
import { InvalidSignatureError, RlpDecodeError, UnsupportedTransactionTypeError } from './errors.js';
import { decodeRlpList, RlpFields, type RlpItem, type RlpList } from './rlp.js';
import type {
  AccessList,
  Eip1559Transaction,
  Eip2930Transaction,
  Eip4844Transaction,
  Eip7702Transaction,
  LegacyTransaction,
  SignedAuthorization,
  Transaction,
} from './transaction-types.js';

const LEGACY_FIELDS = ['nonce', 'gasPrice', 'gas', 'to', 'value', 'input', 'v', 'r', 's'];
const EIP2930_FIELDS = ['chainId', 'nonce', 'gasPrice', 'gas', 'to', 'value', 'input', 'accessList', 'yParity', 'r', 's'];
const EIP1559_FIELDS = ['chainId', 'nonce', 'maxPriorityFeePerGas', 'maxFeePerGas', 'gas', 'to', 'value', 'input',
  'accessList', 'yParity', 'r', 's'];
const EIP4844_FIELDS = [...EIP1559_FIELDS.slice(0, 9), 'maxFeePerBlobGas', 'blobVersionedHashes', 'yParity', 'r', 's'];
const EIP7702_FIELDS = [...EIP1559_FIELDS.slice(0, 9), 'authorizationList', 'yParity', 'r', 's'];
const AUTHORIZATION_FIELDS = ['chainId', 'address', 'nonce', 'yParity', 'r', 's'];

export function decodeTransaction(bytes: Uint8Array): Transaction {
  const first = bytes[0];
  if (first === undefined) throw new RlpDecodeError('transaction', 'empty input');
  if (first >= 0xc0) return legacyFromRlp(decodeRlpList(bytes, 'legacy transaction'));
  if (first > 0x7f) throw new RlpDecodeError('transaction', `first byte 0x${first.toString(16)} is neither a type nor a list`);
  const payload = bytes.subarray(1);
  switch (first) {
    case 0x01: return eip2930FromRlp(decodeRlpList(payload, 'EIP-2930 transaction', [11]));
    case 0x02: return eip1559FromRlp(decodeRlpList(payload, 'EIP-1559 transaction', [12]));
    case 0x03: return eip4844FromRlp(decodeRlpList(payload, 'EIP-4844 transaction', [14]));
    case 0x04: return eip7702FromRlp(decodeRlpList(payload, 'EIP-7702 transaction', [13]));
    default: throw new UnsupportedTransactionTypeError(first);
  }
}

/** One entry of a block body's transaction list: a legacy RLP list, or a byte string with a typed encoding. */
export function transactionFromBodyItem(item: RlpItem): Transaction {
  if (Array.isArray(item)) return legacyFromRlp(item);
  if (item[0] !== undefined && item[0] >= 0xc0) {
    throw new RlpDecodeError('block body transaction', 'a legacy transaction must be an RLP list, not a byte string');
  }
  return decodeTransaction(item);
}

function legacyFromRlp(list: RlpList): LegacyTransaction {
  if (list.length !== 9) throw new RlpDecodeError('legacy transaction', `expected 9 fields, got ${list.length}`);
  const f = new RlpFields(list, 'legacy transaction', LEGACY_FIELDS);
  const v = f.quantity(6);
  const tx: LegacyTransaction = {
    type: 'legacy',
    nonce: f.quantity(0, 8),
    gasPrice: f.quantity(1),
    gas: f.quantity(2, 8),
    to: f.optionalAddress(3),
    value: f.quantity(4),
    input: f.hex(5),
    r: f.quantity(7),
    s: f.quantity(8),
    yParity: 0,
  };
  if (v === 27n || v === 28n) {
    tx.yParity = v === 28n ? 1 : 0;
  } else if (v >= 35n) {
    tx.chainId = (v - 35n) / 2n;
    tx.yParity = (v - 35n) % 2n === 1n ? 1 : 0;
  } else {
    throw new InvalidSignatureError(`legacy v ${v} is neither 27/28 nor EIP-155 (>= 35)`);
  }
  return tx;
}

function accessListFrom(list: RlpList, subject: string): AccessList {
  return list.map((entry, i) => {
    if (!Array.isArray(entry) || entry.length !== 2) throw new RlpDecodeError(subject, `accessList[${i}] is not [address, storageKeys]`);
    const f = new RlpFields(entry, subject, [`accessList[${i}].address`, `accessList[${i}].storageKeys`]);
    const keys = f.list(1);
    const keyFields = new RlpFields(keys, subject, keys.map((_, j) => `accessList[${i}].storageKeys[${j}]`));
    return { address: f.address(0), storageKeys: keys.map((_, j) => keyFields.fixed(j, 32)) };
  });
}

function authorizationListFrom(list: RlpList, subject: string): SignedAuthorization[] {
  return list.map((entry, i) => {
    if (!Array.isArray(entry) || entry.length !== 6) throw new RlpDecodeError(subject, `authorizationList[${i}] is not a 6-field tuple`);
    const f = new RlpFields(entry, subject, AUTHORIZATION_FIELDS.map((name) => `authorizationList[${i}].${name}`));
    return { chainId: f.quantity(0), address: f.address(1), nonce: f.quantity(2, 8), yParity: f.bit(3), r: f.quantity(4), s: f.quantity(5) };
  });
}

function eip2930FromRlp(list: RlpList): Eip2930Transaction {
  const subject = 'EIP-2930 transaction';
  const f = new RlpFields(list, subject, EIP2930_FIELDS);
  return {
    type: 'eip2930', chainId: f.quantity(0), nonce: f.quantity(1, 8), gasPrice: f.quantity(2), gas: f.quantity(3, 8),
    to: f.optionalAddress(4), value: f.quantity(5), input: f.hex(6), accessList: accessListFrom(f.list(7), subject),
    yParity: f.bit(8), r: f.quantity(9), s: f.quantity(10),
  };
}

/** The nine fields EIP-1559, EIP-4844 and EIP-7702 share, in wire order. */
function feeMarketFields(f: RlpFields, subject: string) {
  return {
    chainId: f.quantity(0), nonce: f.quantity(1, 8), maxPriorityFeePerGas: f.quantity(2), maxFeePerGas: f.quantity(3),
    gas: f.quantity(4, 8), value: f.quantity(6), input: f.hex(7), accessList: accessListFrom(f.list(8), subject),
  };
}

function eip1559FromRlp(list: RlpList): Eip1559Transaction {
  const subject = 'EIP-1559 transaction';
  const f = new RlpFields(list, subject, EIP1559_FIELDS);
  return { type: 'eip1559', ...feeMarketFields(f, subject), to: f.optionalAddress(5), yParity: f.bit(9), r: f.quantity(10), s: f.quantity(11) };
}

function eip4844FromRlp(list: RlpList): Eip4844Transaction {
  const subject = 'EIP-4844 transaction';
  const f = new RlpFields(list, subject, EIP4844_FIELDS);
  const hashes = f.list(10);
  const hashFields = new RlpFields(hashes, subject, hashes.map((_, i) => `blobVersionedHashes[${i}]`));
  return {
    type: 'eip4844', ...feeMarketFields(f, subject), to: f.address(5), maxFeePerBlobGas: f.quantity(9),
    blobVersionedHashes: hashes.map((_, i) => hashFields.fixed(i, 32)), yParity: f.bit(11), r: f.quantity(12), s: f.quantity(13),
  };
}

function eip7702FromRlp(list: RlpList): Eip7702Transaction {
  const subject = 'EIP-7702 transaction';
  const f = new RlpFields(list, subject, EIP7702_FIELDS);
  return {
    type: 'eip7702', ...feeMarketFields(f, subject), to: f.address(5),
    authorizationList: authorizationListFrom(f.list(9), subject), yParity: f.bit(10), r: f.quantity(11), s: f.quantity(12),
  };
}
