/** A JSON-RPC withdrawal object (EIP-4895, amount in gwei) → `Withdrawal`. */
import type { Withdrawal } from '../eth/withdrawal.js';
import { JsonFields } from './json-fields.js';

export function withdrawalFromJson(json: unknown, index = 0): Withdrawal {
  const f = new JsonFields(json, `withdrawal ${index}`);
  return { index: f.quantity('index'), validatorIndex: f.quantity('validatorIndex'), address: f.address('address'), amount: f.quantity('amount') };
}
