/** EIP-4895 withdrawals: `[index, validatorIndex, address, amount]`, the amount in gwei. */
import { RlpDecodeError } from './errors.js';
import { fixedBytes, uintField } from './field-bytes.js';
import type { Address } from './hex.js';
import { decodeRlpList, encodeRlp, RlpFields, type RlpInput, type RlpItem } from './rlp.js';

export interface Withdrawal {
  index: bigint;
  validatorIndex: bigint;
  address: Address;
  /** Gwei, not wei. */
  amount: bigint;
}

const SUBJECT = 'withdrawal';
const FIELD_NAMES = ['index', 'validatorIndex', 'address', 'amount'];

export function withdrawalFromRlp(item: RlpItem): Withdrawal {
  if (!Array.isArray(item) || item.length !== 4) throw new RlpDecodeError(SUBJECT, 'expected [index, validatorIndex, address, amount]');
  const f = new RlpFields(item, SUBJECT, FIELD_NAMES);
  return { index: f.quantity(0, 8), validatorIndex: f.quantity(1, 8), address: f.address(2), amount: f.quantity(3, 8) };
}

export function withdrawalToRlp(withdrawal: Withdrawal): RlpInput {
  return [
    uintField(withdrawal.index, SUBJECT, 'index', 64),
    uintField(withdrawal.validatorIndex, SUBJECT, 'validatorIndex', 64),
    fixedBytes(withdrawal.address, 20, SUBJECT, 'address'),
    uintField(withdrawal.amount, SUBJECT, 'amount', 64),
  ];
}

export function decodeWithdrawal(bytes: Uint8Array): Withdrawal {
  return withdrawalFromRlp(decodeRlpList(bytes, SUBJECT));
}

/** The encoding stored in the withdrawals trie. */
export function encodeWithdrawal(withdrawal: Withdrawal): Uint8Array {
  return encodeRlp(withdrawalToRlp(withdrawal));
}
