/**
 * The RLPx frame MAC (`net/p2p/frame-mac.ts`), on the native running Keccak and on its WebAssembly fallback, gives
 * the same 16-byte digests as the RLPx rule computed with @noble/hashes' keccak (devp2p's own implementation), over
 * random sequences of seed, header and body steps, long and odd-length ones included; and devp2p's `MAC`, once
 * replaced, gives them too.
 */
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { MAC } from '@ethereumjs/devp2p';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { RUNNING_KECCAK_IMPLEMENTATION, RUNNING_KECCAK_IMPLEMENTATIONS } from '../../../net/eth/keccak-stream.js';
import { FrameMac, installFastFrameMac } from '../../../net/p2p/frame-mac.js';

/** The rule as devp2p writes it: a running keccak; header/body steps mix in AES-256-ECB of the current digest. */
class ReferenceMac {
  private readonly hash = keccak_256.create();
  constructor(private readonly secret: Uint8Array) {}
  private aes(block: Uint8Array): Uint8Array {
    return createCipheriv('aes-256-ecb', this.secret, null).setAutoPadding(false).update(block);
  }
  update(data: Uint8Array): void { this.hash.update(data); }
  updateHeader(data: Uint8Array): void { this.hash.update(this.aes(this.digest()).map((b, i) => b ^ data[i]!)); }
  updateBody(data: Uint8Array): void {
    this.hash.update(data);
    const prev = this.digest();
    this.hash.update(this.aes(prev).map((b, i) => b ^ prev[i]!));
  }
  digest(): Uint8Array { return this.hash.clone().digest().subarray(0, 16); }
}

type Steps = { kind: 'update' | 'header' | 'body'; data: Uint8Array }[];

function randomSteps(count: number): Steps {
  const steps: Steps = [{ kind: 'update', data: randomBytes(32 + Math.floor(Math.random() * 300)) }];
  for (let i = 0; i < count; i++) {
    steps.push({ kind: 'header', data: randomBytes(16) });
    steps.push({ kind: 'body', data: randomBytes(16 * (1 + Math.floor(Math.random() * 2000))) });
  }
  return steps;
}

function run(mac: { update(d: Uint8Array): void; updateHeader(d: Uint8Array): void; updateBody(d: Uint8Array): void; digest(): Uint8Array }, steps: Steps): string[] {
  const digests: string[] = [];
  for (const step of steps) {
    if (step.kind === 'update') mac.update(step.data);
    else if (step.kind === 'header') mac.updateHeader(step.data);
    else mac.updateBody(step.data);
    digests.push(Buffer.from(mac.digest()).toString('hex'));
  }
  return digests;
}

/** Steps of every length class around Keccak's 136-byte rate, odd ones included, and bodies past a megabyte. */
function oddSteps(): Steps {
  const lengths = [0, 1, 3, 15, 17, 135, 136, 137, 271, 272, 273, 1001, 65_537, (1 << 20) + 5];
  const steps: Steps = [];
  for (const length of lengths) {
    steps.push({ kind: 'update', data: randomBytes(length) });
    steps.push({ kind: 'header', data: randomBytes(16) });
    steps.push({ kind: 'body', data: randomBytes(length) });
  }
  return steps;
}


describe('RLPx frame MAC', () => {
  it('runs on the native running Keccak here (npm ci builds it; CDN_SKIP_NATIVE=1 skips the build)', { skip: process.env.CDN_SKIP_NATIVE === '1' || process.env.CDN_KECCAK === 'wasm' }, () => {
    assert.match(RUNNING_KECCAK_IMPLEMENTATION, /^native-/);
  });

  for (const name of RUNNING_KECCAK_IMPLEMENTATIONS) {
    const create = (secret: Uint8Array) => new FrameMac(secret, name);
    it(`${name}: matches the rule computed with the JS keccak over 40 frames`, () => {
      const secret = randomBytes(32);
      const steps = randomSteps(20);
      const expected = run(new ReferenceMac(secret), steps);
      assert.deepEqual(run(create(secret), steps), expected);
      assert.equal(expected.length, 41);
      assert.equal(new Set(expected).size, expected.length);
    });

    it(`${name}: matches it over long and odd-length steps (0 bytes to 1 MiB + 5, around the 136-byte rate)`, () => {
      const secret = randomBytes(32);
      const steps = oddSteps();
      assert.deepEqual(run(create(secret), steps), run(new ReferenceMac(secret), steps));
    });
  }

  it('two MACs with different secrets or inputs do not share state', () => {
    const a = new FrameMac(randomBytes(32));
    const b = new FrameMac(randomBytes(32));
    const steps = randomSteps(3);
    const alone = run(new FrameMac(Buffer.alloc(32, 7)), steps);
    a.update(randomBytes(50));
    const interleaved = new FrameMac(Buffer.alloc(32, 7));
    const digests: string[] = [];
    for (const step of steps) {
      b.updateBody(randomBytes(32));
      digests.push(...run(interleaved, [step]));
    }
    assert.deepEqual(digests, alone);
  });

  it('devp2p\'s MAC class, once replaced, gives the same digests', () => {
    installFastFrameMac();
    const secret = randomBytes(32);
    const steps = randomSteps(5);
    assert.deepEqual(run(new MAC(secret) as unknown as ReferenceMac, steps), run(new ReferenceMac(secret), steps));
  });
});
