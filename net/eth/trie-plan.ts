/**
 * A Merkle Patricia trie over sorted entries, planned into a `HashPlan` (`keccak-batch.ts`) instead of hashed node
 * by node: every node is encoded once into the plan's arena, bottom-up, and every node of 32 bytes or more becomes a
 * hash job whose `dest` is the 32-byte slot of its reference inside its parent (`0xa0 ‖ hash`). A node's level is one
 * above its highest hashed child, so one `plan.run()` hashes all leaves of all planned tries together, then the
 * nodes above them, and so on up to the roots. Nodes under 32 bytes are embedded in their parent (copied; they
 * cannot hold a hash reference, which alone is 33 bytes). Encodings are those of `trie-node.ts` (Yellow Paper,
 * appendix D), which the node-by-node `sortedPathsRoot` uses.
 */
import type { HashPlan } from './keccak-batch.js';
import { byteWidth, EMPTY_STRING, HASH_REFERENCE_PREFIX, listSize, stringSize, writeLength, writeString } from './rlp-items.js';

function writeListPrefix(out: Uint8Array, offset: number, payloadSize: number): number {
  if (payloadSize <= 55) {
    out[offset] = 0xc0 + payloadSize;
    return offset + 1;
  }
  const width = byteWidth(payloadSize);
  out[offset] = 0xf7 + width;
  writeLength(out, offset + 1, payloadSize, width);
  return offset + 1 + width;
}

/** Size of the hex-prefix encoding of `count` nibbles as an RLP string item. */
function hexPrefixItemSize(count: number): number {
  const length = 1 + (count >> 1);
  return length === 1 ? 1 : 1 + length;
}

function writeHexPrefixItem(out: Uint8Array, offset: number, path: Uint8Array, from: number, to: number, leaf: boolean): number {
  const count = to - from;
  const length = 1 + (count >> 1);
  if (length > 1) out[offset++] = EMPTY_STRING + length;
  const odd = count % 2;
  const flag = (leaf ? 2 : 0) + odd;
  out[offset] = odd === 1 ? (flag << 4) | path[from]! : flag << 4;
  for (let i = from + odd, j = offset + 1; i < to; i += 2, j++) out[j] = (path[i]! << 4) | path[i + 1]!;
  return offset + length;
}

/**
 * The reference to the node last written (no object per node): embedded (`refJob` -1, its `refSize` bytes at
 * `refStart`) or hashed (job `refJob`, 33 bytes in the parent), with the level of its hash job (`refLevel`, -1 when
 * embedded).
 */
let refStart = 0;
let refSize = 0;
let refJob = -1;
let refLevel = -1;

/** Children of the branches being written, one frame of 16 per branch on the current path. */
let childStart = new Int32Array(16 * 80);
let childSize = new Int32Array(16 * 80);
let childJob = new Int32Array(16 * 80);
let frame = 0;

function growFrames(): void {
  const grow = (array: Int32Array) => {
    const out = new Int32Array(array.length * 2);
    out.set(array);
    return out;
  };
  childStart = grow(childStart);
  childSize = grow(childSize);
  childJob = grow(childJob);
}

/** Finishes the node in `arena[start, start+size)` as a child reference, or, as the root, plans its hash into `rootDest`. */
function finishNode(plan: HashPlan, start: number, size: number, level: number, rootDest: number): void {
  if (rootDest >= 0) {
    plan.addJob(start, size, rootDest, level);
    return;
  }
  if (size < 32) {
    refStart = start;
    refSize = size;
    refJob = -1;
    refLevel = -1;
    return;
  }
  refStart = start;
  refSize = 33;
  refJob = plan.addJob(start, size, 0, level);
  refLevel = level;
}

/** Writes the reference of child (start, size, job) at `offset`; returns the offset after it. */
function writeReference(plan: HashPlan, offset: number, start: number, size: number, job: number): number {
  const arena = plan.arena;
  if (job < 0) {
    arena.copyWithin(offset, start, start + size);
    return offset + size;
  }
  arena[offset] = HASH_REFERENCE_PREFIX;
  plan.setDest(job, offset + 1);
  return offset + 33;
}

function writeLeaf(plan: HashPlan, path: Uint8Array, from: number, value: Uint8Array, rootDest: number): void {
  const payloadSize = hexPrefixItemSize(path.length - from) + stringSize(value);
  const size = listSize(payloadSize);
  const start = plan.reserve(size);
  const arena = plan.arena;
  const offset = writeHexPrefixItem(arena, writeListPrefix(arena, start, payloadSize), path, from, path.length, true);
  writeString(arena, offset, value);
  finishNode(plan, start, size, 0, rootDest);
}

function writeRun(plan: HashPlan, paths: readonly Uint8Array[], values: readonly Uint8Array[], from: number, to: number, depth: number, rootDest: number): void {
  const first = paths[from]!;
  if (to - from === 1) {
    writeLeaf(plan, first, depth, values[from]!, rootDest);
    return;
  }
  const last = paths[to - 1]!;
  let shared = depth;
  while (shared < first.length && first[shared] === last[shared]) shared++;
  if (shared === depth) {
    writeBranch(plan, paths, values, from, to, depth, rootDest);
    return;
  }
  writeBranch(plan, paths, values, from, to, shared, -1);
  const child = refStart, childBytes = refSize, job = refJob, childLevel = refLevel;
  const payloadSize = hexPrefixItemSize(shared - depth) + childBytes;
  const size = listSize(payloadSize);
  const start = plan.reserve(size);
  const offset = writeHexPrefixItem(plan.arena, writeListPrefix(plan.arena, start, payloadSize), first, depth, shared, false);
  writeReference(plan, offset, child, childBytes, job);
  finishNode(plan, start, size, childLevel + 1, rootDest);
}

function writeBranch(plan: HashPlan, paths: readonly Uint8Array[], values: readonly Uint8Array[], from: number, to: number, depth: number, rootDest: number): void {
  if (16 * (frame + 1) > childJob.length) growFrames();
  const base = 16 * frame;
  frame += 1;
  for (let i = 0; i < 16; i++) childJob[base + i] = -2; // -2: empty slot
  let value: Uint8Array | undefined;
  let start = from;
  let level = 0;
  if (paths[start]!.length === depth) value = values[start++];
  try {
    while (start < to) {
      const nibble = paths[start]![depth]!;
      let end = start + 1;
      while (end < to && paths[end]![depth] === nibble) end++;
      writeRun(plan, paths, values, start, end, depth + 1, -1);
      childStart[base + nibble] = refStart;
      childSize[base + nibble] = refSize;
      childJob[base + nibble] = refJob;
      if (refLevel + 1 > level) level = refLevel + 1;
      start = end;
    }
  } finally {
    frame -= 1;
  }
  let payloadSize = value === undefined ? 1 : stringSize(value);
  for (let i = 0; i < 16; i++) payloadSize += childJob[base + i] === -2 ? 1 : childSize[base + i]!;
  const size = listSize(payloadSize);
  const node = plan.reserve(size);
  let offset = writeListPrefix(plan.arena, node, payloadSize);
  for (let i = 0; i < 16; i++) {
    const job = childJob[base + i]!;
    if (job === -2) plan.arena[offset++] = EMPTY_STRING;
    else offset = writeReference(plan, offset, childStart[base + i]!, childSize[base + i]!, job);
  }
  if (value === undefined) plan.arena[offset] = EMPTY_STRING;
  else writeString(plan.arena, offset, value);
  finishNode(plan, node, size, level, rootDest);
}

/** keccak256(rlp('')): the root of the empty trie. */
const EMPTY_TRIE_NODE = Uint8Array.of(0x80);

/**
 * Plans the trie over `paths` (nibble paths, strictly sorted, unchecked) holding `values` (non-empty); returns the
 * arena offset where `plan.run()` puts its root hash.
 */
export function planSortedPaths(plan: HashPlan, paths: readonly Uint8Array[], values: readonly Uint8Array[]): number {
  if (paths.length === 0) return plan.hashOf(EMPTY_TRIE_NODE);
  const rootDest = plan.reserve(32);
  writeRun(plan, paths, values, 0, paths.length, 0, rootDest);
  return rootDest;
}
