/**
 * RLPx frame bodies encrypted and decrypted without devp2p's extra copies: its `ECIES.parseBody` and `createBody`
 * copy each AES output with `Uint8Array.from` (measured here at about 3 ms per MB, ten times a plain memory copy)
 * and pad and join with zero-filled buffers, so every byte of every frame was copied two or three times more than
 * needed. These replacements run the same steps (MAC over the ciphertext, checked before decrypting; AES-256-CTR;
 * 16-byte padding with zeros; the frame MAC appended), give byte for byte the same frames, and fail the same way
 * (`Invalid MAC`). Headers (16 bytes) are left to devp2p.
 *
 * `installFrameCrypto()` replaces the two methods of devp2p's exported `ECIES` class once per thread.
 */
import type { Cipher, Decipher } from 'node:crypto';
import { ECIES } from '@ethereumjs/devp2p';

interface FrameMacLike {
  updateBody(data: Uint8Array): void;
  digest(): Uint8Array;
}

interface EciesFrames {
  _bodySize: number | null;
  _ingressMac: FrameMacLike | null;
  _ingressAes: Decipher | null;
  _egressMac: FrameMacLike | null;
  _egressAes: Cipher | null;
}

const MAC_BYTES = 16;
const ZERO_PADDING = new Uint8Array(16);

/** A plain Uint8Array of `length` bytes, not zero-filled (every byte is written by the caller). */
export function uninitialized(length: number): Uint8Array {
  const buffer = Buffer.allocUnsafeSlow(length);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, length);
}

/** A copy of `bytes` in its own buffer (a plain memory copy). */
export function copyBytes(bytes: Uint8Array): Uint8Array {
  const out = uninitialized(bytes.length);
  out.set(bytes);
  return out;
}

const view = (buffer: Buffer, length = buffer.length): Uint8Array => new Uint8Array(buffer.buffer, buffer.byteOffset, length);

function equal16(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length < MAC_BYTES || b.length !== MAC_BYTES) return false;
  let diff = 0;
  for (let i = 0; i < MAC_BYTES; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

type FrameMethod = (this: EciesFrames, data: Uint8Array) => Uint8Array | undefined;

const proto = ECIES.prototype as unknown as { parseBody: FrameMethod; createBody: FrameMethod };

/** devp2p's own methods, as they were before `installFrameCrypto` (tests compare both). */
export const DEVP2P_FRAME_BODY: { readonly parseBody: FrameMethod; readonly createBody: FrameMethod } = { parseBody: proto.parseBody, createBody: proto.createBody };

let installed = false;

export function installFrameCrypto(): void {
  if (installed) return;
  installed = true;
  proto.parseBody = function parseBody(this: EciesFrames, data: Uint8Array) {
    if (this._bodySize === null) throw new Error('need to parse header first');
    const body = data.subarray(0, -MAC_BYTES);
    const mac = data.subarray(-MAC_BYTES);
    if (!this._ingressMac) return undefined;
    this._ingressMac.updateBody(body);
    if (!equal16(this._ingressMac.digest(), mac)) throw new Error('Invalid MAC');
    const size = this._bodySize;
    this._bodySize = null;
    if (!this._ingressAes) return undefined;
    return view(this._ingressAes.update(body), size);
  };
  proto.createBody = function createBody(this: EciesFrames, data: Uint8Array) {
    // AES-256-CTR is a stream cipher: the message and its zero padding encrypted one after the other are the
    // padded message encrypted at once, so the padding is not joined to a copy of the message first.
    const padded = Math.ceil(data.length / 16) * 16;
    if (!this._egressAes) return undefined;
    const encrypted = this._egressAes.update(data);
    const frame = uninitialized(padded + MAC_BYTES);
    frame.set(encrypted);
    if (padded !== data.length) frame.set(this._egressAes.update(ZERO_PADDING.subarray(0, padded - data.length)), data.length);
    if (!this._egressMac) return undefined;
    const body = frame.subarray(0, padded);
    this._egressMac.updateBody(body);
    frame.set(this._egressMac.digest().subarray(0, MAC_BYTES), padded);
    return frame;
  };
}
