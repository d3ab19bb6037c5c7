/**
 * The RLPx frame MAC (devp2p's `MAC`: a running keccak256 over the frames, each header and body step mixed with
 * AES-256-ECB of the current digest) on a running Keccak kept natively (`net/eth/keccak-stream.ts`, the addon's
 * `KeccakStream`; hash-wasm's WebAssembly Keccak where the addon is not built) instead of the pure-JS one devp2p
 * carries: the MAC hashes every byte of every frame on both ends of a session (JS keccak ~8 MB/s, WebAssembly with
 * its state saved and loaded around each step ~290 MB/s, native with BMI2 ~420 MB/s of CPU here).
 *
 * Each MAC keeps one AES-256-ECB cipher (ECB has no chaining, so one cipher object encrypts every 16-byte block the
 * same way a fresh one would) and one 16-byte digest buffer reused by every step. The results are byte for byte
 * those of devp2p's class (a test drives both with the same inputs), so peers see no difference.
 *
 * `installFastFrameMac()` replaces the four methods of devp2p's exported `MAC` class once per thread; the class's
 * constructor still runs (its unused JS hasher is created and left alone).
 */
import { createCipheriv, type Cipher } from 'node:crypto';
import { MAC } from '@ethereumjs/devp2p';
import { createRunningKeccak, type RunningKeccak } from '../eth/keccak-stream.js';

const DIGEST_BYTES = 16;
const utf8 = new TextEncoder();

const states = new WeakMap<object, FrameMac>();

/** The frame MAC over a running Keccak: same inputs, same 16-byte digests as devp2p's `MAC`. */
export class FrameMac {
  private readonly keccak: RunningKeccak;
  private readonly ecb: Cipher;
  /** The last digest taken (overwritten by the next step). */
  private readonly current = new Uint8Array(DIGEST_BYTES);

  /** `keccak` names one of `RUNNING_KECCAK_IMPLEMENTATIONS` (tests); the default is the fastest here. */
  constructor(secret: Uint8Array, keccak?: string) {
    this.keccak = createRunningKeccak(keccak);
    this.ecb = createCipheriv('aes-256-ecb', secret, null);
    this.ecb.setAutoPadding(false);
  }

  /** Absorbs `data` (a string as UTF-8, as devp2p's MAC accepts). */
  update(data: Uint8Array | string): void {
    this.keccak.absorb(typeof data === 'string' ? utf8.encode(data) : data);
  }

  updateHeader(data: Uint8Array): void {
    this.keccak.absorbXor(this.ecb.update(this.digest()), data);
  }

  updateBody(data: Uint8Array): void {
    this.keccak.absorb(data);
    const prev = this.digest();
    this.keccak.absorbXor(this.ecb.update(prev), prev);
  }

  /** The first 16 bytes of the running hash's digest, in a buffer the next step overwrites (copy it to keep it). */
  digest(): Uint8Array {
    this.keccak.digest(this.current);
    return this.current;
  }
}

let installed = false;

/** Makes every devp2p `MAC` of this thread run on `FrameMac` (idempotent). */
export function installFastFrameMac(): void {
  if (installed) return;
  installed = true;
  type MacLike = { _secret: Uint8Array };
  const of = (mac: MacLike): FrameMac => {
    let state = states.get(mac);
    if (!state) {
      state = new FrameMac(mac._secret);
      states.set(mac, state);
    }
    return state;
  };
  const proto = MAC.prototype as unknown as Record<'update' | 'updateHeader' | 'updateBody' | 'digest', (this: MacLike, data?: Uint8Array | string) => unknown>;
  proto.update = function update(this: MacLike, data?: Uint8Array | string) { of(this).update(data!); };
  proto.updateHeader = function updateHeader(this: MacLike, data?: Uint8Array | string) { of(this).updateHeader(data as Uint8Array); };
  proto.updateBody = function updateBody(this: MacLike, data?: Uint8Array | string) { of(this).updateBody(data as Uint8Array); };
  proto.digest = function digest(this: MacLike) { return of(this).digest().slice(); };
}
