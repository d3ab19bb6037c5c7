/** secp256k1 as Ethereum uses it: addresses from keys, recovery of a signer from a 32-byte hash, RFC 6979 signing. */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { InvalidSignatureError } from './errors.js';
import { bytesToHex, hexToBytes, type Address, type Hex } from './hex.js';
import { keccak256 } from './keccak.js';
import { nativeSecp256k1 } from './secp256k1-native.js';
import type { Signature } from './transaction-types.js';

/** A 32-byte secp256k1 secret key, as hex or bytes. */
export type PrivateKey = Hex | Uint8Array;

function secretKeyBytes(privateKey: PrivateKey): Uint8Array {
  const bytes = typeof privateKey === 'string' ? hexToBytes(privateKey, 32) : privateKey;
  if (!secp256k1.utils.isValidSecretKey(bytes)) throw new InvalidSignatureError('private key is not a valid secp256k1 scalar');
  return bytes;
}

/** The address of a 65-byte uncompressed public key: the last 20 bytes of keccak256 of its 64 coordinate bytes. */
export function publicKeyToAddress(uncompressed: Uint8Array): Address {
  if (uncompressed.length !== 65 || uncompressed[0] !== 0x04) {
    throw new InvalidSignatureError(`expected a 65-byte uncompressed public key, got ${uncompressed.length} bytes`);
  }
  return bytesToHex(keccak256(uncompressed.subarray(1)).subarray(12));
}

export function privateKeyToAddress(privateKey: PrivateKey): Address {
  return publicKeyToAddress(secp256k1.getPublicKey(secretKeyBytes(privateKey), false));
}

const CURVE_ORDER = secp256k1.Point.CURVE().n;

/** Recovery with @noble/curves (pure JS): the fallback, and the reference the native path is tested against. */
export function recoverWithNoble(hash: Uint8Array, signature: Signature): Uint8Array {
  return new secp256k1.Signature(signature.r, signature.s, signature.yParity).recoverPublicKey(hash).toBytes(false);
}

function writeScalar(out: Uint8Array, offset: number, value: bigint, name: string): void {
  if (value <= 0n || value >= CURVE_ORDER) throw new RangeError(`${name} is outside 1…n-1`);
  let rest = value;
  for (let i = offset + 31; i >= offset; i--, rest >>= 8n) out[i] = Number(rest & 0xffn);
}

/** Recovery with libsecp256k1; only when `nativeSecp256k1` loaded. */
export function recoverNatively(hash: Uint8Array, signature: Signature): Uint8Array {
  const compact = new Uint8Array(64);
  writeScalar(compact, 0, signature.r, 'r');
  writeScalar(compact, 32, signature.s, 's');
  return nativeSecp256k1!.ecdsaRecover(compact, signature.yParity, hash, false);
}

/** The address that signed `hash`; throws `InvalidSignatureError` when no key can be recovered. */
export function recoverAddress(hash: Uint8Array, signature: Signature): Address {
  if (signature.yParity !== 0 && signature.yParity !== 1) {
    throw new InvalidSignatureError(`yParity ${String(signature.yParity)} is not 0 or 1`);
  }
  let publicKey: Uint8Array;
  try {
    publicKey = nativeSecp256k1 === null ? recoverWithNoble(hash, signature) : recoverNatively(hash, signature);
  } catch (error) {
    throw new InvalidSignatureError(`no public key recovers from r=${signature.r}, s=${signature.s} (${(error as Error).message})`);
  }
  return publicKeyToAddress(publicKey);
}

/** Deterministic (RFC 6979) low-s signature over a 32-byte hash. */
export function signHash(hash: Uint8Array, privateKey: PrivateKey): Signature {
  const bytes = secp256k1.sign(hash, secretKeyBytes(privateKey), { prehash: false, format: 'recovered' });
  const sig = secp256k1.Signature.fromBytes(bytes, 'recovered');
  return { r: sig.r, s: sig.s, yParity: sig.recovery === 1 ? 1 : 0 };
}
