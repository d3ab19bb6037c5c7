/**
 * Public-key recovery through libsecp256k1 (the `secp256k1` package's N-API binding, shipped prebuilt for
 * linux-x64 glibc/musl, darwin-arm64 and win32-x64, loaded by node-gyp-build without compiling), about 15× faster
 * than @noble/curves' pure-JS recovery. Null where no prebuilt binding loads; `signature.ts` then uses @noble/curves.
 * Both accept any `r`, `s` in 1…n-1 (no low-s rule) and reject the rest. `CDN_SECP256K1=js` in the environment forces
 * the JS path (for A/B measurements).
 */
import { createRequire } from 'node:module';

interface Secp256k1Binding {
  /** 64-byte `r || s`, recovery id 0/1, 32-byte message hash → 65-byte uncompressed public key. Throws when nothing recovers. */
  ecdsaRecover(signature: Uint8Array, recid: number, message: Uint8Array, compressed: boolean): Uint8Array;
}

function load(): Secp256k1Binding | null {
  if (process.env.CDN_SECP256K1 === 'js') return null;
  try {
    return createRequire(import.meta.url)('secp256k1/bindings.js') as Secp256k1Binding;
  } catch {
    return null;
  }
}

export const nativeSecp256k1: Secp256k1Binding | null = load();
