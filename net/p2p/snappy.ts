/**
 * Snappy (the raw block format devp2p v5 frames use) for the eth messages the node sends and receives: the native `snappy`
 * package (Rust's snap through N-API, prebuilt for this platform inside the registry package) when its binary loads,
 * else the pure-JS `snappyjs` devp2p itself uses. Both produce valid snappy that either decoder reads (a test checks
 * the round trips both ways); the native one compressed mainnet-shaped block material about 35× faster here
 * (0.4 ms against 13 ms per MB), and every answer the node serves passes through it.
 */
import { createRequire } from 'node:module';
import * as snappyjs from 'snappyjs';

interface NativeSnappy {
  compressSync(input: Uint8Array): Buffer;
  uncompressSync(input: Uint8Array, options?: { asBuffer?: boolean }): string | Buffer;
}

function loadNative(): NativeSnappy | null {
  try {
    return createRequire(import.meta.url)('snappy') as NativeSnappy;
  } catch {
    return null;
  }
}

const native = loadNative();

/** Which implementation `compress` uses on this machine. */
export const SNAPPY_IMPLEMENTATION: 'native' | 'js' = native ? 'native' : 'js';

export function compress(payload: Uint8Array): Uint8Array {
  return native ? native.compressSync(payload) : snappyjs.compress(payload);
}

/** Decompression of received eth messages (`frame-body.ts`): native when it loads, else snappyjs. */
export function uncompressFast(payload: Uint8Array): Uint8Array {
  if (!native) return snappyjs.uncompress(payload);
  const out = native.uncompressSync(payload, { asBuffer: true }) as Buffer;
  // A plain Uint8Array over the same memory: `Buffer#slice` would not copy, and decoders compare plain arrays.
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

/** Decompression as devp2p does it for other protocols (snappyjs); exported for tests that read what `compress` wrote. */
export function uncompress(payload: Uint8Array): Uint8Array {
  return snappyjs.uncompress(payload);
}

/** The native decoder, when it loads (tests). */
export function nativeUncompress(payload: Uint8Array): Uint8Array | null {
  return native ? native.uncompressSync(payload, { asBuffer: true }) as Buffer : null;
}
