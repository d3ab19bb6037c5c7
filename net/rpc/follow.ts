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
 * Bounds: a branch that forks more than `maxReorgDepth` blocks below the local head throws `ReorgTooDeepError`;
 * a source far behind catches up `maxBlocks` blocks per call (`behind` says more are waiting).
 */
import { BlockVerificationError } from '../eth/errors.js';
import { bytesToHex, type Hash } from '../eth/hex.js';
import type { BlockMaterial } from '../../store/chain-material.js';
import type { RpcClient } from './client.js';
import { materialFromJson, verifiedMaterialFromJson, type ConvertOptions } from './convert.js';
import { BlockUnavailableError, ReorgTooDeepError, UpstreamError, UpstreamFormatError } from './errors.js';
import { JsonFields } from './json-fields.js';

export interface BlockRef {
  readonly number: number;
  readonly hash: Hash;
}

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
  readonly maxReorgDepth: number;
  readonly maxBlocks?: number;
  /** Accept anvil's pooled-form blob transactions root (see pooled-blob-root.ts); dev chains only. */
  readonly pooledBlobRoots?: boolean;
}

export interface FollowResult {
  /** The block followed to: the last of `branch`, or an already recorded block when nothing is new. */
  readonly head: BlockRef;
  /** New verified blocks, oldest first; the first one's parent is recorded (unless this is the first block ever followed). */
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
  const behind = localHead !== null && latest.number > localHead.number + maxBlocks;
  const target = behind ? await blockRef(client, localHead.number + maxBlocks) : latest;
  if (options.isKnown(target.hash)) {
    const steppedBack = localHead !== null && target.hash !== localHead.hash && target.number <= localHead.number;
    return { head: target, branch: [], reorged: steppedBack, behind };
  }
  const branch = [await fetchBlock(client, target.hash, options)];
  if (localHead !== null) await walkBack(branch, options, localHead);
  branch.reverse();
  const first = branch[0]!;
  const reorged = localHead !== null && first.parentHash !== localHead.hash;
  return { head: target, branch, reorged, behind };
}

/**
 * Appends parents to `branch` (newest first while walking) until one is recorded. Throws before fetching a parent
 * whose own parent would be the common ancestor deeper than `maxReorgDepth` below the local head.
 */
async function walkBack(branch: FollowedBlock[], options: FollowOptions, localHead: BlockRef): Promise<void> {
  const lowestAllowedAncestor = localHead.number - options.maxReorgDepth;
  for (let oldest = branch[0]!; !options.isKnown(oldest.parentHash); oldest = branch.at(-1)!) {
    const parentNumber = oldest.number - 1;
    if (parentNumber < 0 || parentNumber - 1 < lowestAllowedAncestor) {
      throw new ReorgTooDeepError(localHead, options.maxReorgDepth, { number: oldest.number, hash: oldest.hash });
    }
    const parent = await fetchBlock(options.client, oldest.parentHash, options);
    if (parent.number !== parentNumber) {
      throw new BlockVerificationError('number', String(parentNumber), String(parent.number), parent.number, parent.hash);
    }
    branch.push(parent);
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
