/**
 * Consumer credentials at rest (spec §5.9): scrypt (node:crypto) with a random 16-byte salt per
 * consumer; only the salt, the cost parameters and the derived key are stored. Verification
 * derives the key again with the stored parameters and compares in constant time.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { CredentialHash } from './consumers.js';

/** N = 2^14, r = 8, p = 1: about 16 MiB and tens of milliseconds per derivation. */
const COST = 1 << 14;
const BLOCK_SIZE = 8;
const PARALLELIZATION = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

export async function hashCredential(secret: string): Promise<CredentialHash> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(secret, salt, { N: COST, r: BLOCK_SIZE, p: PARALLELIZATION });
  return { algorithm: 'scrypt', cost: COST, blockSize: BLOCK_SIZE, parallelization: PARALLELIZATION, salt, hash };
}

export async function verifyCredential(secret: string, stored: CredentialHash): Promise<boolean> {
  if (stored.algorithm !== 'scrypt') return false;
  const expected = Buffer.from(stored.hash);
  const derived = await derive(secret, Buffer.from(stored.salt), { N: stored.cost, r: stored.blockSize, p: stored.parallelization }, expected.length);
  return derived.length === expected.length && timingSafeEqual(derived, expected);
}

function derive(secret: string, salt: Buffer, options: ScryptOptions, keyBytes = KEY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret.normalize('NFC'), salt, keyBytes, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}
