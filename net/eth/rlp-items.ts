/**
 * RLP item sizes and writers shared by the two trie encoders (trie-node.ts node by node, trie-plan.ts
 * whole tries into a hash plan): strings and list prefixes written into caller-owned buffers.
 */

export const EMPTY_STRING = 0x80;
/** The RLP prefix of a 32-byte string: a child referred to by its hash. */
export const HASH_REFERENCE_PREFIX = 0x80 + 32;

export function byteWidth(length: number): number {
  let width = 0;
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) width += 1;
  return width;
}

export function writeLength(out: Uint8Array, offset: number, length: number, width: number): void {
  for (let i = width - 1, rest = length; i >= 0; i--, rest = Math.floor(rest / 256)) out[offset + i] = rest % 256;
}

/** Size of `bytes` as an RLP string item. */
export function stringSize(bytes: Uint8Array): number {
  if (bytes.length === 1 && bytes[0]! < EMPTY_STRING) return 1;
  return bytes.length <= 55 ? 1 + bytes.length : 1 + byteWidth(bytes.length) + bytes.length;
}

/** Writes `bytes` as an RLP string item at `offset`; returns the offset after it. */
export function writeString(out: Uint8Array, offset: number, bytes: Uint8Array): number {
  if (bytes.length === 1 && bytes[0]! < EMPTY_STRING) {
    out[offset] = bytes[0]!;
    return offset + 1;
  }
  if (bytes.length <= 55) {
    out[offset] = EMPTY_STRING + bytes.length;
    offset += 1;
  } else {
    const width = byteWidth(bytes.length);
    out[offset] = 0xb7 + width;
    writeLength(out, offset + 1, bytes.length, width);
    offset += 1 + width;
  }
  out.set(bytes, offset);
  return offset + bytes.length;
}

/** Size of an RLP list item with a payload of `payloadSize` bytes. */
export function listSize(payloadSize: number): number {
  return payloadSize <= 55 ? 1 + payloadSize : 1 + byteWidth(payloadSize) + payloadSize;
}
