/**
 * The node's changes to devp2p's RLPx hot path, installed once per thread before any host is created: the frame MAC
 * on a native running Keccak (`frame-mac.ts`), socket input without the quadratic copy (`frame-input.ts`) and native
 * snappy for received eth messages (`frame-body.ts`), frame bodies encrypted and decrypted without devp2p's
 * extra copies (`frame-crypto.ts`). Outgoing eth payloads are compressed by `snappy.ts` in
 * `eth-protocol.ts`. Where a profile of `npm run bench -- p2p` put
 * the time before these: devp2p's JS keccak (the MAC) 52% of the main thread, snappyjs compression 3.3%; then
 * snappyjs decompression 18% of the follower's main thread.
 */
import { installFrameBody } from './frame-body.js';
import { installFrameCrypto } from './frame-crypto.js';
import { installFrameInput } from './frame-input.js';
import { installFastFrameMac } from './frame-mac.js';

export function installRlpxFastPath(): void {
  installFastFrameMac();
  installFrameInput();
  installFrameBody();
  installFrameCrypto();
}
