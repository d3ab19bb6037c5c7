/**
 * Blob gas pricing: EIP-4844 (excess blob gas, blob base fee), EIP-7691 (Prague target/max), EIP-7892 (blob
 * parameter only forks: parameters per fork), EIP-7918 (Osaka: blob base fee bounded below by a reserve price tied to
 * the execution base fee). All amounts are bigints in wei or gas.
 */
import type { Transaction } from './transaction-types.js';

export const GAS_PER_BLOB = 131072n;
export const MIN_BASE_FEE_PER_BLOB_GAS = 1n;
/** EIP-7918: the execution-gas cost a blob is priced at least at. */
export const BLOB_BASE_COST = 8192n;

/** Blob parameters of one fork (geth `config.blobSchedule.<fork>`). */
export interface BlobScheduleEntry {
  target: number;
  max: number;
  baseFeeUpdateFraction: bigint;
}

/** The blob parameters in force for a block: its fork's schedule entry and whether EIP-7918 applies. */
export interface BlobParams extends BlobScheduleEntry {
  eip7918: boolean;
}

/** The parent header fields the child's excess blob gas depends on (absent before Cancun, counted as zero). */
export interface BlobParentFields {
  excessBlobGas?: bigint;
  blobGasUsed?: bigint;
  baseFeePerGas?: bigint;
}

/** `factor * e ** (numerator / denominator)`, by the integer Taylor series of EIP-4844. */
export function fakeExponential(factor: bigint, numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError(`fakeExponential denominator must be positive, got ${denominator}`);
  let i = 1n;
  let output = 0n;
  let accumulator = factor * denominator;
  while (accumulator > 0n) {
    output += accumulator;
    accumulator = (accumulator * numerator) / (denominator * i);
    i += 1n;
  }
  return output / denominator;
}

/** Price of one unit of blob gas, in wei, for a block with this `excessBlobGas`. */
export function blobBaseFee(excessBlobGas: bigint, baseFeeUpdateFraction: bigint): bigint {
  return fakeExponential(MIN_BASE_FEE_PER_BLOB_GAS, excessBlobGas, baseFeeUpdateFraction);
}

/**
 * The child's `excessBlobGas` from its parent, under the child's fork parameters (target, max and update fraction
 * are the child's, including for the parent's blob price in the EIP-7918 comparison, as geth computes it).
 */
export function calcExcessBlobGas(parent: BlobParentFields, params: BlobParams): bigint {
  const parentExcess = parent.excessBlobGas ?? 0n;
  const parentUsed = parent.blobGasUsed ?? 0n;
  const targetGas = BigInt(params.target) * GAS_PER_BLOB;
  if (parentExcess + parentUsed < targetGas) return 0n;
  if (params.eip7918) {
    const reservePrice = BLOB_BASE_COST * (parent.baseFeePerGas ?? 0n);
    const blobPrice = GAS_PER_BLOB * blobBaseFee(parentExcess, params.baseFeeUpdateFraction);
    if (reservePrice > blobPrice) {
      return parentExcess + (parentUsed * BigInt(params.max - params.target)) / BigInt(params.max);
    }
  }
  return parentExcess + parentUsed - targetGas;
}

/** Blobs carried by a transaction (zero for every type but EIP-4844). */
export function blobCount(tx: Transaction): number {
  return tx.type === 'eip4844' ? tx.blobVersionedHashes.length : 0;
}

/** Blob gas a block's transactions use: what its header's `blobGasUsed` must equal. */
export function blobGasUsedBy(transactions: readonly Transaction[]): bigint {
  let blobs = 0;
  for (const tx of transactions) blobs += blobCount(tx);
  return BigInt(blobs) * GAS_PER_BLOB;
}

/** Wei burned for blob gas: `blobGasUsed * blobBaseFee`. */
export function blobGasBurned(blobGasUsed: bigint, blobBaseFeePerGas: bigint): bigint {
  return blobGasUsed * blobBaseFeePerGas;
}

/** Wei burned for execution gas (EIP-1559): `gasUsed * baseFeePerGas`. */
export function executionGasBurned(gasUsed: bigint, baseFeePerGas: bigint): bigint {
  return gasUsed * baseFeePerGas;
}

/** EIP-7918 reserve price of one blob in wei (`BLOB_BASE_COST * baseFeePerGas`); below it the excess grows faster. */
export function blobReservePrice(baseFeePerGas: bigint): bigint {
  return BLOB_BASE_COST * baseFeePerGas;
}
