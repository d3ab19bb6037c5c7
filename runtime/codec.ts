import { Packr } from 'msgpackr';

/** msgpackr with 64-bit+ BigInt support (plain numbers stay numbers). */
const packr = new Packr({ useBigIntExtension: true, useRecords: false, moreTypes: true });

/** Encodes to an exact-size buffer that owns its memory, so it can be transferred without dragging msgpackr's pooled buffer along. */
export function encode(value: unknown): Uint8Array {
  return packr.pack(value).slice();
}

export function decode<T = unknown>(bytes: Uint8Array): T {
  return packr.unpack(bytes) as T;
}
