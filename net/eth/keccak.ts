/** Keccak-256 as Ethereum uses it (not SHA3-256). */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, type Hash } from './hex.js';

export function keccak256(bytes: Uint8Array): Uint8Array {
  return keccak_256(bytes);
}

export function keccak256Hex(bytes: Uint8Array): Hash {
  return bytesToHex(keccak_256(bytes));
}
