/**
 * Following an upstream's head. `follow` finds the upstream head, and when it is not recorded yet fetches it and
 * walks back by parent hash — `eth_getBlockByHash(h, true)` with `eth_getBlockReceipts(h)`, one batch per block,
 * each block verified — until a block whose hash is already recorded. Walking by hash (not by number) keeps the
 * branch consistent while the upstream reorganises. The branch comes back oldest first, ready to record.
 *
 * Each block is converted the way the history lane converts its batches: the JSON written straight into the bytes
 * the chain tables store, and those bytes verified against the header (`verifiedMaterialFromJson`; ~4 ms of CPU for
 * a mainnet-shaped block, against ~27 ms decoding into objects, verifying them and encoding them again). It runs
 * inline on the caller's thread: the live lane sees one block per slot. A block refused on its transactions root
 * alone goes through the object path (`materialFromJson`), which accepts anvil's pooled-form root when
 * `pooledBlobRoots` is set and otherwise throws the error it always has (`PooledBlobRootError` when that is the cause).
 *
 * Where following begins: with nothing recorded, at the upstream's finalized block or `maxReorgDepth` below its head,
 * whichever is higher — never at the head itself, so a reorganisation the limit accepts always finds a recorded
 * ancestor (a first block recorded at the head of a chain that then reorganised left nothing to attach to).
 * Below the recorded chain's first block (`base`) nothing is recorded: a branch reaching it replaces the recorded
 * chain from there up, and the chain lane undoes it unless it is finalized (a store that started at an unfinalized
 * head, as earlier versions did, recovers this way).
 *
 * Bounds: a branch that forks more than `maxReorgDepth` blocks below the local head throws `ReorgTooDeepError`,
 * which says where it forks (found by comparing the upstream's blocks with the recorded ones, when it can); a
 * source far behind catches up `maxBlocks` blocks per call (`behind` says more are waiting).
 */
import { BlockVerificationError } from '../eth/errors.js';
import { bytesToHex, type Hash } from '../eth/hex.js';
import type { BlockMaterial } from '../../store/chain-material.js';
import type { RpcClient } from './client.js';
import { materialFromJson, verifiedMaterialFromJson, type ConvertOptions } from './convert.js';
import { BlockUnavailableError, ReorgTooDeepError, UpstreamError, UpstreamFormatError, type ForkPoint } from './errors.js';
import { JsonFields } from './json-fields.js';
import type { BlockRef } from '../../store/chain-types.js';

export const DEFAULT_MAX_BLOCKS_PER_FOLLOW = 64;

/** A verified block: what `recordBlocks` writes, and the numbers and hashes following needs. */
export interface FollowedBlock {
  readonly material: BlockMaterial;
  readonly number: number;
  readonly hash: Hash;
  readonly parentHash: Hash;
}

export interface FollowOptions {
  readonly client: RpcClient;
  /** Whether verified material for this block hash is already recorded. */
  readonly isKnown: (hash: Hash) => boolean;
  /** The head this source last followed; null when nothing is recorded yet (following starts at the upstream head). */
  readonly localHead: BlockRef | null;
  /** The lowest recorded canonical block, where the recorded chain begins; null (or absent) when nothing is recorded. */
  readonly base?: BlockRef | null;
  /** The recorded canonical hash at a number, to say where a refused branch forks; without it the error says less. */
  readonly canonicalHash?: (number: number) => Hash | undefined;
  readonly maxReorgDepth: number;
  readonly maxBlocks?: number;
  /** Accept anvil's pooled-form blob transactions root (see pooled-blob-root.ts); dev chains only. */
  readonly pooledBlobRoots?: boolean;
}

export interface FollowResult {
  /** The block followed to: the last of `branch`, or an already recorded block when nothing is new. */
  readonly head: BlockRef;
  /**
   * New verified blocks, oldest first; the first one's parent is recorded, unless this is the first block ever
   * followed or the branch replaces the recorded chain from its first block up (`reorged`).
   */
  readonly branch: readonly FollowedBlock[];
  /** The new branch does not attach to the previous local head, or the upstream head moved to a recorded block at or below it. */
  readonly reorged: boolean;
  /** The upstream has blocks beyond `head`: call again without waiting. */
  readonly behind: boolean;
}

export async function follow(options: FollowOptions): Promise<FollowResult> {
  const { client, localHead } = options;
  const maxBlocks = options.maxBlocks ?? DEFAULT_MAX_BLOCKS_PER_FOLLOW;
  const latest = await blockRef(client, 'latest');
  if (localHead === null) return followFirst(options, latest);
  const behind = latest.number > localHead.number + maxBlocks;
  const target = behind ? await blockRef(client, localHead.number + maxBlocks) : latest;
  if (options.isKnown(target.hash)) {
    const steppedBack = target.hash !== localHead.hash && target.number <= localHead.number;
    return { head: target, branch: [], reorged: steppedBack, behind };
  }
  const branch = [await fetchBlock(client, target.hash, options)];
  await walkBack(branch, options, localHead);
  branch.reverse();
  const first = branch[0]!;
  return { head: target, branch, reorged: first.parentHash !== localHead.hash, behind };
}

/** The first block a fresh store follows (see the module comment): recorded alone, the rest comes by catching up. */
async function followFirst(options: FollowOptions, latest: BlockRef): Promise<FollowResult> {
  const finalized = options.maxReorgDepth === 0 ? null : await finalizedIfServed(options.client);
  const number = firstFollowedNumber(latest.number, finalized?.number ?? null, options.maxReorgDepth);
  const start = number === latest.number ? latest : await blockRef(options.client, number);
  const branch = options.isKnown(start.hash) ? [] : [await fetchBlock(options.client, start.hash, options)];
  return { head: start, branch, reorged: false, behind: latest.number > start.number };
}

/** The upstream's finalized block; null as well when it refuses the tag (a dev chain, a stub): the start then stands on the depth alone. */
async function finalizedIfServed(client: RpcClient): Promise<BlockRef | null> {
  try {
    return await fetchFinalized(client);
  } catch (error) {
    if (error instanceof UpstreamError && error.failure === 'rpc') return null;
    throw error;
  }
}

/** The upstream's finalized block or `maxReorgDepth` below its head, whichever is higher (never above the head, never below 0). */
export function firstFollowedNumber(latest: number, finalized: number | null, maxReorgDepth: number): number {
  const deepestReorg = Math.max(0, latest - maxReorgDepth);
  return finalized === null ? deepestReorg : Math.min(latest, Math.max(finalized, deepestReorg));
}

/**
 * Appends parents to `branch` (newest first while walking) until one is recorded, or until the branch reaches the
 * recorded chain's first block (below which nothing is recorded: the branch replaces the recorded chain from there;
 * never block 0, which the chain spec fixes).
 * Throws before fetching a parent whose own parent would be the common ancestor deeper than `maxReorgDepth` below
 * the local head.
 */
async function walkBack(branch: FollowedBlock[], options: FollowOptions, localHead: BlockRef): Promise<void> {
  const lowestAllowedAncestor = localHead.number - options.maxReorgDepth;
  const base = options.base ?? null;
  for (let oldest = branch[0]!; !options.isKnown(oldest.parentHash); oldest = branch.at(-1)!) {
    if (base !== null && oldest.number <= base.number && oldest.number > 0) {
      if (oldest.number - 1 < lowestAllowedAncestor) throw await reorgTooDeep(options, localHead, oldest);
      return;
    }
    const parentNumber = oldest.number - 1;
    if (parentNumber < 0 || parentNumber - 1 < lowestAllowedAncestor) throw await reorgTooDeep(options, localHead, oldest);
    const parent = await fetchBlock(options.client, oldest.parentHash, options);
    if (parent.number !== parentNumber) {
      throw new BlockVerificationError('number', String(parentNumber), String(parent.number), parent.number, parent.hash);
    }
    branch.push(parent);
  }
}

/** The refusal, saying where the branch forks when the upstream's blocks tell (see `forkPoint`). */
async function reorgTooDeep(options: FollowOptions, localHead: BlockRef, unknownBlock: BlockRef): Promise<ReorgTooDeepError> {
  return new ReorgTooDeepError(localHead, options.maxReorgDepth, unknownBlock, await forkPoint(options, localHead));
}

/**
 * Where the followed chain and the upstream part: the newest recorded canonical block the upstream still serves at
 * its number (a binary search from the recorded chain's first block to the local head, one header a step), or
 * below the first recorded block when even that differs; undefined when it cannot tell (no store view, or the
 * upstream failed while asked) — the error then says less, never something wrong.
 */
async function forkPoint(options: FollowOptions, localHead: BlockRef): Promise<ForkPoint | undefined> {
  const { canonicalHash, base } = options;
  if (canonicalHash === undefined || base === undefined || base === null) return undefined;
  const matches = async (number: number): Promise<boolean> => {
    const recorded = canonicalHash(number);
    if (recorded === undefined) return false;
    try {
      return (await blockRef(options.client, number)).hash === recorded;
    } catch (error) {
      if (error instanceof BlockUnavailableError) return false;
      throw error;
    }
  };
  try {
    if (!(await matches(base.number))) return { below: base.number };
    let low = base.number;
    let high = localHead.number + 1;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (await matches(middle)) low = middle;
      else high = middle;
    }
    return { at: { number: low, hash: canonicalHash(low)! } };
  } catch (error) {
    if (error instanceof UpstreamError || error instanceof UpstreamFormatError) return undefined;
    throw error;
  }
}

/** A block's number and hash without its transactions (cheap: most polls find the head already recorded). */
export async function blockRef(client: RpcClient, block: number | 'latest' | 'finalized'): Promise<BlockRef> {
  const tag = typeof block === 'number' ? `0x${block.toString(16)}` : block;
  const json = await client.call('eth_getBlockByNumber', [tag, false]);
  if (json === null) throw new BlockUnavailableError(typeof block === 'number' ? `number ${block}` : `'${block}'`);
  return refFromJson(json, typeof block === 'number' ? block : undefined);
}

function refFromJson(json: unknown, expectedNumber: number | undefined): BlockRef {
  const f = new JsonFields(json, 'block');
  const ref = { number: f.number('number'), hash: f.fixed('hash', 32) };
  if (expectedNumber !== undefined && ref.number !== expectedNumber) {
    throw new UpstreamFormatError(`block ${expectedNumber}`, 'number', `the upstream answered with block ${ref.number}`);
  }
  return ref;
}

/** One block with its receipts, by hash, verified. */
export async function fetchBlock(client: RpcClient, hash: Hash, options: ConvertOptions = {}): Promise<FollowedBlock> {
  const [block, receipts] = await client.batch([
    { method: 'eth_getBlockByHash', params: [hash, true] },
    { method: 'eth_getBlockReceipts', params: [hash] },
  ]);
  if (block === null || receipts === null) throw new BlockUnavailableError(hash);
  if (!Array.isArray(receipts)) throw new UpstreamFormatError(`block ${hash}`, 'receipts', 'eth_getBlockReceipts did not answer with an array');
  const converted = await followedFromJson(block, receipts, options);
  if (converted.hash !== hash) throw new UpstreamFormatError(`block ${hash}`, 'hash', `the upstream answered with block ${converted.hash}`);
  return converted;
}

/**
 * A block's JSON and its receipts → verified material, by the direct writer; a block it refuses on the transactions
 * root alone goes through the object path, which accepts anvil's pooled-form root with `pooledBlobRoots` and
 * otherwise throws what the live lane always threw for such a block. Every other refusal is already the object
 * path's error (same checks, same order, same errors: net/eth/verify-material.ts, `writeMaterial`).
 */
export async function followedFromJson(block: unknown, receipts: readonly unknown[], options: ConvertOptions = {}): Promise<FollowedBlock> {
  try {
    const { material, hash, parentHash } = verifiedMaterialFromJson(block, receipts);
    return { material, number: material.number, hash, parentHash };
  } catch (error) {
    if (!(error instanceof BlockVerificationError) || error.field !== 'transactionsRoot') throw error;
  }
  const { material, header } = await materialFromJson(block, receipts, options);
  if (options.pooledBlobRoots !== true) {
    throw new Error(`the direct JSON → RLP path refused the transactions root of a block the object path accepts (${bytesToHex(material.hash)}); this is a bug in net/rpc/json-rlp.ts or net/eth/verify-material.ts`);
  }
  return { material, number: header.number, hash: bytesToHex(material.hash), parentHash: header.parentHash };
}

/** How clients say "no finalized block yet" (geth: "finalized block not found", erigon: "unknown block"). */
const NO_FINALIZED_BLOCK = /not found|unknown block|finalized/i;

/** The upstream's finalized block, or null when it has none yet. Other failures throw. */
export async function fetchFinalized(client: RpcClient): Promise<BlockRef | null> {
  let json: unknown;
  try {
    json = await client.call('eth_getBlockByNumber', ['finalized', false]);
  } catch (error) {
    if (error instanceof UpstreamError && error.failure === 'rpc' && NO_FINALIZED_BLOCK.test(error.detail)) return null;
    throw error;
  }
  return json === null ? null : refFromJson(json, undefined);
}
