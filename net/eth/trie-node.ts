/**
 * Merkle Patricia trie nodes as Ethereum encodes them (Yellow Paper, appendix D): leaf `[hexPrefix(path, leaf),
 * value]`, extension `[hexPrefix(path), child]`, branch `[child0 … child15, value]`, each written straight into
 * one buffer. A child is referenced by its RLP when that is shorter than 32 bytes (embedded), else by its hash.
 */
import { keccak256 } from './keccak.js';

const EMPTY_STRING = 0x80;
const HASH_REFERENCE_PREFIX = 0x80 + 32;

function byteWidth(length: number): number {
  let width = 0;
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) width += 1;
  return width;
}

function writeLength(out: Uint8Array, offset: number, length: number, width: number): void {
  for (let i = width - 1, rest = length; i >= 0; i--, rest = Math.floor(rest / 256)) out[offset + i] = rest % 256;
}

/** Size of `bytes` as an RLP string item. */
function stringSize(bytes: Uint8Array): number {
  if (bytes.length === 1 && bytes[0]! < EMPTY_STRING) return 1;
  return bytes.length <= 55 ? 1 + bytes.length : 1 + byteWidth(bytes.length) + bytes.length;
}

function writeString(out: Uint8Array, offset: number, bytes: Uint8Array): number {
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

/** A buffer for an RLP list of `payloadSize` bytes, with the list prefix written; returns it and the payload offset. */
function listBuffer(payloadSize: number): [Uint8Array, number] {
  if (payloadSize <= 55) {
    const out = new Uint8Array(1 + payloadSize);
    out[0] = 0xc0 + payloadSize;
    return [out, 1];
  }
  const width = byteWidth(payloadSize);
  const out = new Uint8Array(1 + width + payloadSize);
  out[0] = 0xf7 + width;
  writeLength(out, 1, payloadSize, width);
  return [out, 1 + width];
}

/** Hex-prefix (compact) encoding of a nibble path with its leaf flag. */
function hexPrefix(nibbles: Uint8Array, leaf: boolean): Uint8Array {
  const odd = nibbles.length % 2;
  const out = new Uint8Array(1 + (nibbles.length >> 1));
  const flag = (leaf ? 2 : 0) + odd;
  out[0] = odd === 1 ? (flag << 4) | nibbles[0]! : flag << 4;
  for (let i = odd, j = 1; i < nibbles.length; i += 2, j++) out[j] = (nibbles[i]! << 4) | nibbles[i + 1]!;
  return out;
}

export function leafNode(path: Uint8Array, value: Uint8Array): Uint8Array {
  const encodedPath = hexPrefix(path, true);
  const [out, offset] = listBuffer(stringSize(encodedPath) + stringSize(value));
  writeString(out, writeString(out, offset, encodedPath), value);
  return out;
}

/** `child` is a reference from `nodeReference`. */
export function extensionNode(path: Uint8Array, child: Uint8Array): Uint8Array {
  const encodedPath = hexPrefix(path, false);
  const [out, offset] = listBuffer(stringSize(encodedPath) + child.length);
  out.set(child, writeString(out, offset, encodedPath));
  return out;
}

/** `children` holds 16 references from `nodeReference` (undefined for an empty slot). */
export function branchNode(children: readonly (Uint8Array | undefined)[], value: Uint8Array | undefined): Uint8Array {
  let payloadSize = value === undefined ? 1 : stringSize(value);
  for (let i = 0; i < 16; i++) payloadSize += children[i]?.length ?? 1;
  const [out, start] = listBuffer(payloadSize);
  let offset = start;
  for (let i = 0; i < 16; i++) {
    const child = children[i];
    if (child === undefined) out[offset++] = EMPTY_STRING;
    else {
      out.set(child, offset);
      offset += child.length;
    }
  }
  if (value === undefined) out[offset] = EMPTY_STRING;
  else writeString(out, offset, value);
  return out;
}

/** How a parent refers to an encoded node: the node itself when under 32 bytes, else rlp(keccak256(node)). */
export function nodeReference(node: Uint8Array): Uint8Array {
  if (node.length < 32) return node;
  const out = new Uint8Array(33);
  out[0] = HASH_REFERENCE_PREFIX;
  out.set(keccak256(node), 1);
  return out;
}
