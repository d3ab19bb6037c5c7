/**
 * A running Keccak-256: bytes absorbed as they come, and digests taken of everything absorbed so far without ending
 * it (the RLPx frame MAC takes one after every header and body step of a session that lasts for hours).
 *
 * It runs in the native addon `native/keccak` (`KeccakStream`: the sponge's 200-byte state kept natively, absorbed
 * into in place; compiled with BMI1/BMI2 where the CPU has them) when the addon loaded. Without it (not built, or an
 * older build without the class), or with `CDN_KECCAK=wasm` (the batch hash's switch, `keccak-batch.ts`), each
 * stream keeps a saved hash-wasm state and loads it around every step, with the same results.
 */
import { createKeccak } from 'hash-wasm';
import { loadNativeAddon } from '../../runtime/native-addon.js';

export interface RunningKeccak {
  /** Absorbs `bytes`. */
  absorb(bytes: Uint8Array): void;
  /** Absorbs `a[i] ^ b[i]` for i below the shorter one's length. */
  absorbXor(a: Uint8Array, b: Uint8Array): void;
  /** Writes the first min(out.length, 32) bytes of keccak256 of everything absorbed so far; the stream goes on. */
  digest(out: Uint8Array): void;
}

interface StreamAddon {
  /** Absent from builds before it was added. */
  KeccakStream?: new (implementation?: number) => RunningKeccak;
  streamImplementations?: () => string[];
}

const loaded = loadNativeAddon<StreamAddon>('keccak', 'keccak_batch', import.meta.url);
const NativeStream = loaded.addon?.KeccakStream;
const nativeNames = NativeStream ? loaded.addon!.streamImplementations!().map((name) => `native-${name}`) : [];

/** Implementations usable here, fastest last: `wasm`, then the addon's `native-portable` and `native-bmi2`. */
export const RUNNING_KECCAK_IMPLEMENTATIONS: readonly string[] = ['wasm', ...nativeNames];

/** One hash-wasm hasher per thread serves every fallback stream: each loads its own saved state for each step. */
const hasher = await createKeccak(256);
hasher.init();
const INITIAL_STATE = hasher.save();

const XOR_CHUNK = new Uint8Array(64);

class WasmRunningKeccak implements RunningKeccak {
  private state: Uint8Array = INITIAL_STATE;

  absorb(bytes: Uint8Array): void {
    hasher.load(this.state);
    hasher.update(bytes);
    this.state = hasher.save();
  }

  absorbXor(a: Uint8Array, b: Uint8Array): void {
    const length = Math.min(a.length, b.length);
    hasher.load(this.state);
    for (let at = 0; at < length; at += XOR_CHUNK.length) {
      const n = Math.min(XOR_CHUNK.length, length - at);
      for (let i = 0; i < n; i++) XOR_CHUNK[i] = a[at + i]! ^ b[at + i]!;
      hasher.update(XOR_CHUNK.subarray(0, n));
    }
    this.state = hasher.save();
  }

  digest(out: Uint8Array): void {
    hasher.load(this.state);
    const hash = hasher.digest('binary');
    out.set(hash.subarray(0, Math.min(out.length, hash.length)));
  }
}

/** What `createRunningKeccak()` gives on this thread: the fastest native one, or `wasm` (also under `CDN_KECCAK=wasm`). */
export const RUNNING_KECCAK_IMPLEMENTATION: string = process.env.CDN_KECCAK === 'wasm' ? 'wasm' : RUNNING_KECCAK_IMPLEMENTATIONS.at(-1)!;

/** A new empty running Keccak-256 on `implementation` (one of `RUNNING_KECCAK_IMPLEMENTATIONS`; tests), else the default. */
export function createRunningKeccak(implementation = RUNNING_KECCAK_IMPLEMENTATION): RunningKeccak {
  if (implementation === 'wasm') return new WasmRunningKeccak();
  const index = nativeNames.indexOf(implementation);
  if (index < 0) throw new Error(`running keccak ${implementation} is not available here; expected one of ${RUNNING_KECCAK_IMPLEMENTATIONS.join(', ')}`);
  return new NativeStream!(index);
}
