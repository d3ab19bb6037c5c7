/**
 * RLPx frame bodies without devp2p's extra copies (`net/p2p/frame-crypto.ts`): for the same keys and the same
 * sequence of payloads (sizes on and off the 16-byte boundary, up to a few MB), `createBody` writes byte for byte
 * the frames devp2p's own method writes, `parseBody` reads them back to the payloads exactly as devp2p's does, and a
 * frame with one flipped bit is refused with devp2p's `Invalid MAC`.
 */
import assert from 'node:assert/strict';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ECIES, MAC } from '@ethereumjs/devp2p';
import { DEVP2P_FRAME_BODY, installFrameCrypto } from '../../../net/p2p/frame-crypto.js';
import { installFastFrameMac } from '../../../net/p2p/frame-mac.js';

installFastFrameMac();
installFrameCrypto();

const aesKey = randomBytes(32);
const macSecret = randomBytes(32);
const seed = randomBytes(64);

/** One direction of a session: the sender's egress state and the receiver's ingress state, with the same keys. */
function endpoints() {
  const egressMac = new MAC(macSecret);
  egressMac.update(seed);
  const ingressMac = new MAC(macSecret);
  ingressMac.update(seed);
  const iv = new Uint8Array(16);
  return {
    sender: { _bodySize: null, _egressAes: createCipheriv('aes-256-ctr', aesKey, iv), _egressMac: egressMac, _ingressAes: null, _ingressMac: null },
    receiver: { _bodySize: null as number | null, _ingressAes: createDecipheriv('aes-256-ctr', aesKey, iv), _ingressMac: ingressMac, _egressAes: null, _egressMac: null },
  };
}

const payloads = [1, 15, 16, 17, 1000, 4096, 70_001, 1 << 20, (3 << 20) + 5].map((size) => randomBytes(size));

describe('RLPx frame bodies without the extra copies', () => {
  it('createBody writes devp2p\'s frames byte for byte; parseBody reads them back as devp2p does', () => {
    const ours = endpoints();
    const theirs = endpoints();
    for (const payload of payloads) {
      const frame = DEVP2P_FRAME_BODY.createBody.call(theirs.sender as never, payload)!;
      const ourFrame = createBodyOf(ours.sender, payload);
      assert.deepEqual(Buffer.from(ourFrame), Buffer.from(frame), `frame of a ${payload.length}-byte payload`);
      ours.receiver._bodySize = payload.length;
      theirs.receiver._bodySize = payload.length;
      const read = parseBodyOf(ours.receiver, ourFrame);
      const theirRead = DEVP2P_FRAME_BODY.parseBody.call(theirs.receiver as never, frame)!;
      assert.deepEqual(Buffer.from(read), Buffer.from(payload));
      assert.deepEqual(Buffer.from(theirRead), Buffer.from(payload));
    }
  });

  it('refuses a frame with a flipped bit (Invalid MAC)', () => {
    const ours = endpoints();
    const frame = createBodyOf(ours.sender, randomBytes(5000));
    frame[100]! ^= 0x04;
    ours.receiver._bodySize = 5000;
    assert.throws(() => parseBodyOf(ours.receiver, frame), /Invalid MAC/);
  });
});

type FrameMethod = (data: Uint8Array) => Uint8Array | undefined;
const methods = ECIES.prototype as unknown as { createBody: FrameMethod; parseBody: FrameMethod };
/** The installed (replaced) methods, called on a plain state object. */
function createBodyOf(state: object, payload: Uint8Array): Uint8Array {
  return methods.createBody.call(state, payload)!;
}
function parseBodyOf(state: object, frame: Uint8Array): Uint8Array {
  return methods.parseBody.call(state, frame)!;
}
