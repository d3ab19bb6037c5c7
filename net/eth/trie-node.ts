/**
 * Merkle Patricia trie nodes as Ethereum encodes them (Yellow Paper, appendix D): leaf `[hexPrefix(path, leaf),
 * value]`, extension `[hexPrefix(path), child]`, branch `[child0 … child15, value]`. A parent refers to a child by
 * the child's RLP when that is shorter than 32 bytes (embedded), else by `rlp(keccak256(child))`.
 *
 * A node is only ever needed as that reference (or, for the root, as its hash), so each node is written into one
 * reused scratch buffer and hashed from there: no buffer per node (typed arrays above 64 bytes get an off-heap
 * store, costly to allocate and to collect). The scratch is per thread and each call finishes with it before
 * returning, so calls do not interfere.
 */
import { keccak256 } from './keccak.js';
import { byteWidth, EMPTY_STRING, HASH_REFERENCE_PREFIX, listSize, stringSize, writeLength, writeString } from './rlp-items.js';

let scratch = new Uint8Array(4096);

function reserve(size: number): Uint8Array {
  if (scratch.length < size) scratch = new Uint8Array(Math.max(size, scratch.length * 2));
  return scratch;
}

/** Writes an RLP list prefix at 0; returns the payload offset. */
function writeListPrefix(out: Uint8Array, payloadSize: number): number {
  if (payloadSize <= 55) {
    out[0] = 0xc0 + payloadSize;
    return 1;
  }
  const width = byteWidth(payloadSize);
  out[0] = 0xf7 + width;
  writeLength(out, 1, payloadSize, width);
  return 1 + width;
}

/** Bytes of the hex-prefix (compact) encoding of `count` nibbles. */
function hexPrefixLength(count: number): number {
  return 1 + (count >> 1);
}

/** Size of the hex-prefix encoding of `path[from…to)` as an RLP string item. */
function hexPrefixItemSize(path: Uint8Array, from: number, to: number): number {
  const length = hexPrefixLength(to - from);
  if (length === 1) return 1; // one byte below 0x80: flags ≤ 0x3f
  return 1 + length;
}

/** Writes the hex-prefix (compact) encoding of `path[from…to)` with its leaf flag as an RLP string item. */
function writeHexPrefixItem(out: Uint8Array, offset: number, path: Uint8Array, from: number, to: number, leaf: boolean): number {
  const count = to - from;
  const length = hexPrefixLength(count);
  if (length > 1) out[offset++] = EMPTY_STRING + length;
  const odd = count % 2;
  const flag = (leaf ? 2 : 0) + odd;
  out[offset] = odd === 1 ? (flag << 4) | path[from]! : flag << 4;
  for (let i = from + odd, j = offset + 1; i < to; i += 2, j++) out[j] = (path[i]! << 4) | path[i + 1]!;
  return offset + length;
}

/** How a parent refers to the node in `scratch[0…size)`; for the root, its hash. */
function finish(size: number, root: boolean): Uint8Array {
  const node = scratch.subarray(0, size);
  if (root) return keccak256(node);
  if (size < 32) return node.slice();
  const out = new Uint8Array(33);
  out[0] = HASH_REFERENCE_PREFIX;
  out.set(keccak256(node), 1);
  return out;
}

/** Leaf for the nibbles `path[from…to)` holding `value`: its reference (or, with `root`, its hash). */
export function leafReference(path: Uint8Array, from: number, to: number, value: Uint8Array, root = false): Uint8Array {
  const payloadSize = hexPrefixItemSize(path, from, to) + stringSize(value);
  const out = reserve(listSize(payloadSize));
  const offset = writeHexPrefixItem(out, writeListPrefix(out, payloadSize), path, from, to, true);
  return finish(writeString(out, offset, value), root);
}

/** Extension for the nibbles `path[from…to)` over the child `reference`. */
export function extensionReference(path: Uint8Array, from: number, to: number, child: Uint8Array, root = false): Uint8Array {
  const payloadSize = hexPrefixItemSize(path, from, to) + child.length;
  const out = reserve(listSize(payloadSize));
  const offset = writeHexPrefixItem(out, writeListPrefix(out, payloadSize), path, from, to, false);
  out.set(child, offset);
  return finish(offset + child.length, root);
}

/** Branch over 16 child references (undefined for an empty slot) and an optional value. */
export function branchReference(children: readonly (Uint8Array | undefined)[], value: Uint8Array | undefined, root = false): Uint8Array {
  let payloadSize = value === undefined ? 1 : stringSize(value);
  for (let i = 0; i < 16; i++) payloadSize += children[i]?.length ?? 1;
  const out = reserve(listSize(payloadSize));
  let offset = writeListPrefix(out, payloadSize);
  for (let i = 0; i < 16; i++) {
    const child = children[i];
    if (child === undefined) out[offset++] = EMPTY_STRING;
    else {
      out.set(child, offset);
      offset += child.length;
    }
  }
  if (value === undefined) out[offset++] = EMPTY_STRING;
  else offset = writeString(out, offset, value);
  return finish(offset, root);
}
