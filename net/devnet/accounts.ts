/**
 * Deterministic keys from the seed: the accounts that send every transaction, the EIP-7702 authorities that only
 * sign authorizations (so their nonces move by authorizations alone), and the block fee recipients.
 */
import { InvalidSignatureError, privateKeyToAddress, type Address } from '../eth/index.js';
import { deriveBytes, type DevnetSeed } from './prng.js';

export interface DevnetAccount {
  address: Address;
  privateKey: Uint8Array;
}

/** Number of EIP-7702 authorities (accounts that delegate their code but never send). */
export const AUTHORITY_COUNT = 8;
const FEE_RECIPIENT_COUNT = 4;

function deriveAccount(seed: DevnetSeed, role: string, index: number): DevnetAccount {
  // A keccak digest is a valid secp256k1 scalar except with probability ~2^-128; the next attempt covers that case.
  for (let attempt = 0; ; attempt++) {
    const privateKey = deriveBytes(seed, role, index, attempt);
    try {
      return { address: privateKeyToAddress(privateKey), privateKey };
    } catch (error) {
      if (!(error instanceof InvalidSignatureError)) throw error;
    }
  }
}

/** The transaction senders: `count` accounts derived from the seed. */
export function devnetAccounts(seed: DevnetSeed, count: number): DevnetAccount[] {
  return Array.from({ length: count }, (_, i) => deriveAccount(seed, 'account', i));
}

/** The EIP-7702 authorities: they sign authorizations and never send a transaction. */
export function devnetAuthorities(seed: DevnetSeed): DevnetAccount[] {
  return Array.from({ length: AUTHORITY_COUNT }, (_, i) => deriveAccount(seed, 'authority', i));
}

/** Block fee recipients (the header's `miner`), one picked per block. */
export function devnetFeeRecipients(seed: DevnetSeed): Address[] {
  return Array.from({ length: FEE_RECIPIENT_COUNT }, (_, i) => deriveAccount(seed, 'fee-recipient', i).address);
}
