/**
 * The RLPx frame MAC (devp2p's `MAC`: a running keccak256 over the frames, each header and body step mixed with
 * AES-256-ECB of the current digest) on hash-wasm's WebAssembly Keccak instead of the pure-JS one devp2p carries:
 * the MAC hashes every byte of every frame on both ends of a session, and the JS keccak measured here at about
 * 8 MB/s against ~250 MB/s for the WebAssembly one, which made it the largest cost of fetching blocks over RLPx.
 *
 * One hasher per thread serves every MAC: each MAC keeps its own saved Keccak state and loads it for each step
 * (`save`/`load` copy a few hundred bytes), and each keeps one AES-256-ECB cipher (ECB has no chaining, so one
 * cipher object encrypts every 16-byte block the same way a fresh one would). The results are byte for byte those
 * of devp2p's class (a test drives both with the same inputs), so peers see no difference.
 *
 * `installFastFrameMac()` replaces the four methods of devp2p's exported `MAC` class once per thread; the class's
 * constructor still runs (its unused JS hasher is created and left alone).
 */
import { createCipheriv, type Cipher } from 'node:crypto';
import { MAC } from '@ethereumjs/devp2p';
import { createKeccak } from 'hash-wasm';

const hasher = await createKeccak(256);
hasher.init();
/** The Keccak state right after `init()`: where every MAC starts. */
const INITIAL_STATE = hasher.save();

const states = new WeakMap<object, FrameMac>();

/** The frame MAC over WebAssembly Keccak: same inputs, same 16-byte digests as devp2p's `MAC`. */
export class FrameMac {
  private keccak: Uint8Array = INITIAL_STATE;
  private readonly ecb: Cipher;

  constructor(secret: Uint8Array) {
    this.ecb = createCipheriv('aes-256-ecb', secret, null);
    this.ecb.setAutoPadding(false);
  }

  /** Absorbs `data` (a string as UTF-8, as devp2p's MAC accepts). */
  update(data: Uint8Array | string): void {
    this.keccak = absorb(this.keccak, data);
  }

  updateHeader(data: Uint8Array): void {
    const encrypted = this.ecb.update(this.digest());
    this.keccak = absorb(this.keccak, xor16(encrypted, data));
  }

  updateBody(data: Uint8Array): void {
    this.keccak = absorb(this.keccak, data);
    const prev = this.digest();
    const encrypted = this.ecb.update(prev);
    this.keccak = absorb(this.keccak, xor16(encrypted, prev));
  }

  digest(): Uint8Array {
    hasher.load(this.keccak);
    return hasher.digest('binary').subarray(0, 16);
  }
}

function absorb(state: Uint8Array, data: Uint8Array | string): Uint8Array {
  hasher.load(state);
  hasher.update(data);
  return hasher.save();
}

/** XOR of the first 16 bytes of `a` and `b` (devp2p's `xor` over a 16-byte AES block and a 16-byte header or digest). */
function xor16(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = a[i]! ^ b[i]!;
  return out;
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
  proto.digest = function digest(this: MacLike) { return Uint8Array.from(of(this).digest()); };
}
