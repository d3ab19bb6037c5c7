/**
 * A JSON-RPC transaction object → `Transaction` (types 0–4) in its canonical block form. Blob sidecars that some
 * upstreams add (`blobs`, `commitments`, `proofs`) are not part of the block and are ignored. A legacy transaction's
 * `v` gives its chain id (EIP-155) and y-parity; a typed one carries `yParity` (older nodes send only `v`, 0 or 1).
 */
import type { AccessList, SignedAuthorization, Signature, Transaction } from '../eth/transaction-types.js';
import { JsonFields } from './json-fields.js';

const TYPES = ['legacy', 'eip2930', 'eip1559', 'eip4844', 'eip7702'] as const;

export function transactionFromJson(json: unknown, index = 0): Transaction {
  const f = new JsonFields(json, `transaction ${index}`);
  const typeNumber = f.has('type') ? f.number('type') : 0;
  const type = TYPES[typeNumber];
  if (type === undefined) throw f.invalid('type', 'a transaction type 0x0 … 0x4', f.raw('type'));
  const common = { nonce: f.quantity('nonce'), gas: f.quantity('gas'), value: f.quantity('value'), input: f.data(f.has('input') ? 'input' : 'data') };
  if (type === 'legacy') return legacyFromJson(f, common);
  const typed = { ...common, chainId: f.quantity('chainId'), accessList: accessListFromJson(f), ...typedSignature(f) };
  switch (type) {
    case 'eip2930':
      return { type, ...typed, gasPrice: f.quantity('gasPrice'), to: f.nullableAddress('to') };
    case 'eip1559':
      return { type, ...typed, ...feeMarket(f), to: f.nullableAddress('to') };
    case 'eip4844':
      return {
        type, ...typed, ...feeMarket(f), to: f.address('to'),
        maxFeePerBlobGas: f.quantity('maxFeePerBlobGas'),
        blobVersionedHashes: f.fixedList('blobVersionedHashes', 32),
      };
    case 'eip7702':
      return {
        type, ...typed, ...feeMarket(f), to: f.address('to'),
        authorizationList: f.list('authorizationList').map((entry, i) => authorizationFromJson(entry, `${f.subject} authorizationList[${i}]`)),
      };
  }
}

type Common = Pick<Transaction, 'nonce' | 'gas' | 'value' | 'input'>;

function legacyFromJson(f: JsonFields, common: Common): Transaction {
  const v = f.quantity('v');
  const signature = { r: f.quantity('r'), s: f.quantity('s') };
  const base = { type: 'legacy' as const, ...common, gasPrice: f.quantity('gasPrice'), to: f.nullableAddress('to') };
  if (v === 27n || v === 28n) return { ...base, ...signature, yParity: v === 28n ? 1 : 0 };
  if (v < 35n) throw f.invalid('v', '27, 28 or an EIP-155 value ≥ 35', `0x${v.toString(16)}`);
  const chainId = (v - 35n) / 2n;
  const stated = f.optionalQuantity('chainId');
  if (stated !== undefined && stated !== chainId) throw f.invalid('chainId', `${chainId} (as v says)`, `0x${stated.toString(16)}`);
  return { ...base, chainId, ...signature, yParity: (v - 35n) % 2n === 1n ? 1 : 0 };
}

function feeMarket(f: JsonFields): { maxPriorityFeePerGas: bigint; maxFeePerGas: bigint } {
  return { maxPriorityFeePerGas: f.quantity('maxPriorityFeePerGas'), maxFeePerGas: f.quantity('maxFeePerGas') };
}

/** `yParity`, or `v` when an older node omits it (0/1, or 27/28 from a few clients). */
function typedSignature(f: JsonFields): Signature {
  return { r: f.quantity('r'), s: f.quantity('s'), yParity: parity(f) };
}

function parity(f: JsonFields): 0 | 1 {
  const field = f.has('yParity') ? 'yParity' : 'v';
  const value = f.quantity(field);
  if (value === 0n || value === 27n) return 0;
  if (value === 1n || value === 28n) return 1;
  throw f.invalid(field, 'a y-parity of 0 or 1', `0x${value.toString(16)}`);
}

function accessListFromJson(f: JsonFields): AccessList {
  if (!f.has('accessList')) return [];
  return f.list('accessList').map((entry, i) => {
    const e = new JsonFields(entry, `${f.subject} accessList[${i}]`);
    return { address: e.address('address'), storageKeys: e.fixedList('storageKeys', 32) };
  });
}

function authorizationFromJson(json: unknown, subject: string): SignedAuthorization {
  const a = new JsonFields(json, subject);
  return { chainId: a.quantity('chainId'), address: a.address('address'), nonce: a.quantity('nonce'), ...typedSignature(a) };
}
