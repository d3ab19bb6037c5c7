/**
 * Transaction shapes, named as viem names them. All quantities are bigints (nonce and gas included), so a value is
 * never rounded; `input` is the calldata. A signed transaction is its unsigned shape plus `Signature`; a legacy
 * transaction keeps `chainId` only when it is EIP-155 replay-protected (its `v` is derived, never stored).
 */
import type { Address, Hash, Hex } from './hex.js';

export type TransactionType = 'legacy' | 'eip2930' | 'eip1559' | 'eip4844' | 'eip7702';

/** The EIP-2718 type byte of each transaction type (legacy has none on the wire; its receipt type is 0). */
export const TRANSACTION_TYPE_BYTE = {
  legacy: 0x00,
  eip2930: 0x01,
  eip1559: 0x02,
  eip4844: 0x03,
  eip7702: 0x04,
} as const satisfies Record<TransactionType, number>;

export interface Signature {
  r: bigint;
  s: bigint;
  yParity: 0 | 1;
}

export interface AccessListEntry {
  address: Address;
  storageKeys: readonly Hash[];
}
export type AccessList = readonly AccessListEntry[];

/** An EIP-7702 authorization tuple before signing. */
export interface Authorization {
  chainId: bigint;
  address: Address;
  nonce: bigint;
}
export interface SignedAuthorization extends Authorization, Signature {}

interface TransactionCommon {
  nonce: bigint;
  gas: bigint;
  value: bigint;
  input: Hex;
}

export interface UnsignedLegacyTransaction extends TransactionCommon {
  type: 'legacy';
  /** Present for EIP-155 transactions (signed over the chain id); absent for pre-EIP-155 ones. */
  chainId?: bigint;
  gasPrice: bigint;
  to: Address | null;
}

export interface UnsignedEip2930Transaction extends TransactionCommon {
  type: 'eip2930';
  chainId: bigint;
  gasPrice: bigint;
  to: Address | null;
  accessList: AccessList;
}

export interface UnsignedEip1559Transaction extends TransactionCommon {
  type: 'eip1559';
  chainId: bigint;
  maxPriorityFeePerGas: bigint;
  maxFeePerGas: bigint;
  to: Address | null;
  accessList: AccessList;
}

/** EIP-4844 in its canonical (block) form: versioned hashes only, no blobs, commitments or proofs. */
export interface UnsignedEip4844Transaction extends TransactionCommon {
  type: 'eip4844';
  chainId: bigint;
  maxPriorityFeePerGas: bigint;
  maxFeePerGas: bigint;
  to: Address;
  accessList: AccessList;
  maxFeePerBlobGas: bigint;
  blobVersionedHashes: readonly Hash[];
}

export interface UnsignedEip7702Transaction extends TransactionCommon {
  type: 'eip7702';
  chainId: bigint;
  maxPriorityFeePerGas: bigint;
  maxFeePerGas: bigint;
  to: Address;
  accessList: AccessList;
  authorizationList: readonly SignedAuthorization[];
}

export type UnsignedTransaction =
  | UnsignedLegacyTransaction
  | UnsignedEip2930Transaction
  | UnsignedEip1559Transaction
  | UnsignedEip4844Transaction
  | UnsignedEip7702Transaction;

export type LegacyTransaction = UnsignedLegacyTransaction & Signature;
export type Eip2930Transaction = UnsignedEip2930Transaction & Signature;
export type Eip1559Transaction = UnsignedEip1559Transaction & Signature;
export type Eip4844Transaction = UnsignedEip4844Transaction & Signature;
export type Eip7702Transaction = UnsignedEip7702Transaction & Signature;

export type Transaction =
  | LegacyTransaction
  | Eip2930Transaction
  | Eip1559Transaction
  | Eip4844Transaction
  | Eip7702Transaction;

/** The legacy `v` value: `chainId * 2 + 35 + yParity` under EIP-155, else `27 + yParity`. */
export function legacyV(tx: Pick<LegacyTransaction, 'chainId' | 'yParity'>): bigint {
  const parity = BigInt(tx.yParity);
  return tx.chainId === undefined ? 27n + parity : tx.chainId * 2n + 35n + parity;
}
