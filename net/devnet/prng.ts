/**
 * The devnet's only source of randomness: xoshiro128** (32-bit state words, fast, well distributed), seeded from a
 * keccak digest so that every stream is a pure function of the seed and a label.
 */
import { keccak256 } from '../eth/index.js';

export class Prng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** Seeds from the first 16 bytes (an all-zero state, which xoshiro cannot leave, is replaced). */
  constructor(seed: Uint8Array) {
    if (seed.length < 16) throw new RangeError(`Prng needs a 16-byte seed, got ${seed.length} bytes`);
    const view = new DataView(seed.buffer, seed.byteOffset, 16);
    this.s0 = view.getUint32(0);
    this.s1 = view.getUint32(4);
    this.s2 = view.getUint32(8);
    this.s3 = view.getUint32(12);
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  uint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1) with 53 bits of precision. */
  float(): number {
    const high = this.uint32() >>> 5;
    const low = this.uint32() >>> 6;
    return (high * 67_108_864 + low) / 9_007_199_254_740_992;
  }

  /** Uniform integer in [0, maxExclusive). */
  int(maxExclusive: number): number {
    if (!(maxExclusive > 0)) throw new RangeError(`Prng.int needs a positive bound, got ${maxExclusive}`);
    return Math.floor(this.float() * maxExclusive);
  }

  /** Uniform integer in [min, maxInclusive]. */
  between(min: number, maxInclusive: number): number {
    return min + this.int(maxInclusive - min + 1);
  }

  chance(probability: number): boolean {
    return this.float() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Prng.pick needs a non-empty list');
    return items[this.int(items.length)]!;
  }

  /** Uniform bigint in [0, limit); 64 spare bits keep the modulo bias below 2^-64. */
  bigintBelow(limit: bigint): bigint {
    if (limit <= 0n) throw new RangeError(`Prng.bigintBelow needs a positive bound, got ${limit}`);
    const words = Math.ceil(limit.toString(2).length / 32) + 2;
    let value = 0n;
    for (let i = 0; i < words; i++) value = (value << 32n) | BigInt(this.uint32());
    return value % limit;
  }

  /** Uniform bigint in [min, maxInclusive]. */
  bigintBetween(min: bigint, maxInclusive: bigint): bigint {
    return min + this.bigintBelow(maxInclusive - min + 1n);
  }

  bytes(length: number): Uint8Array {
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i += 4) {
      const word = this.uint32();
      for (let j = 0; j < 4 && i + j < length; j++) out[i + j] = (word >>> (24 - 8 * j)) & 0xff;
    }
    return out;
  }

  /** Fisher–Yates, in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}

function rotl(value: number, bits: number): number {
  return (value << bits) | (value >>> (32 - bits));
}

export type DevnetSeed = string | number | bigint;

/** A 32-byte digest unique to (seed, label, parts): labels and parts are length-delimited by the JSON encoding. */
export function deriveBytes(seed: DevnetSeed, label: string, ...parts: readonly (string | number)[]): Uint8Array {
  return keccak256(new TextEncoder().encode(JSON.stringify(['cdn-devnet', String(seed), label, ...parts])));
}

/** An independent random stream for (seed, label, parts). */
export function randomStream(seed: DevnetSeed, label: string, ...parts: readonly (string | number)[]): Prng {
  return new Prng(deriveBytes(seed, label, ...parts));
}
