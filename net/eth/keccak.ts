/**
 * Keccak-256 as Ethereum uses it (not SHA3-256), on hash-wasm's WebAssembly Keccak: several times faster than the
 * pure-JS @noble/hashes one on the short inputs ingest hashes by the thousand per block (bloom values, trie nodes,
 * transactions), with no native build. One hasher per thread, reused for every call: each call runs init → update
 * → digest synchronously, so calls cannot interleave. The WebAssembly module is instantiated once when this module
 * loads (top-level await).
 */
import { createKeccak } from 'hash-wasm';
import { bytesToHex, type Hash } from './hex.js';

const hasher = await createKeccak(256);

export function keccak256(bytes: Uint8Array): Uint8Array {
  hasher.init();
  hasher.update(bytes);
  return hasher.digest('binary');
}

export function keccak256Hex(bytes: Uint8Array): Hash {
  return bytesToHex(keccak256(bytes));
}
