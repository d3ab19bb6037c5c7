/**
 * Trust below the recorded chain. A block from a history source is verified against its own header (hash, roots,
 * bloom) by the source; whether it is *the canonical* block at its height is proven here, by hash links down from a
 * block the node already trusts: the lowest block of `chain.canonical` (recorded and verified by the live lane), and
 * below it the proven run in `history.canonical` (store/history-canonical.ts).
 *
 * `anchorDown` extends that run down to a target height by walking headers — from blocks recorded locally when the
 * store has them under the expected hash, otherwise fetched from the history source — each header's hash computed
 * and checked against the parent hash its upper neighbour names. Each batch of proven links is committed as it is
 * proven, so a restart (or the next job, after DELETE) resumes from the run's floor. A source that serves another
 * chain (a fork, consistent in itself) fails at the first header whose hash is not the one the proven block above it
 * names, and the error says so. A source that proves canonicality itself (`HistorySource.canonicalLink`: Era1 files
 * matching mainnet's shipped epoch roots) proves the target directly: its link is committed as the start of a run
 * of its own, and the chunk below it links to it by parent hashes as any other.
 *
 * `recordProven` commits blocks whose top link is proven, with their material, their links (below the recorded
 * chain) and their transactions in the canonical transaction index, in one write transaction.
 */
import { decodeHeader } from '../../net/eth/header.js';
import { transactionHashesOfBody } from '../../net/eth/body-transaction-hashes.js';
import { bytesToHex, hexToBytes, type Hash } from '../../net/eth/hex.js';
import { checkHashChain, HistoryBlockError, type HeaderLink, type HistoryBlock } from '../../net/history/history-block.js';
import { getBodyBytes, getCanonicalHash, getHeaderBytes, getReceiptsBytes, putBlockMaterial } from '../../store/chain-material.js';
import type { Store } from '../../store/store.js';
import { lowestLinkAbove, putHistoryLinks, readHistoryLink } from '../../store/history-canonical.js';
import { decodeU64KeyAsNumber } from '../../store/keys.js';
import { indexTransactions, markTxIndexPending } from '../../store/tx-index.js';
import type { DeferredTxIndex } from './tx-index-batch.js';
import type { HistorySource } from './sources.js';
import { fromFirstThatServes, rangePieces, type SourceFailure } from './source-order.js';
import type { BlockRef } from '../../store/chain-types.js';

/** Headers fetched per request of the walk. */
const WALK_BATCH = 256;

/** The lowest block of the recorded chain with its parent hash, or null before the chain lane recorded any. */
export function lowestCanonical(store: Store): HeaderLink | null {
  for (const { key, value } of store.chain.canonical.getRange({ limit: 1 })) {
    const number = decodeU64KeyAsNumber(key);
    const header = getHeaderBytes(store, value, number);
    if (!header) return null;
    return { number, hash: bytesToHex(value) as Hash, parentHash: decodeHeader(header).parentHash };
  }
  return null;
}

/** The hash the canonical block at `number` has, when the node knows it: recorded canonical, or proven below. */
export function trustedHash(store: Store, number: number): Hash | null {
  if (number < 0) return null;
  const canonical = getCanonicalHash(store, number);
  if (canonical) return bytesToHex(canonical) as Hash;
  return readHistoryLink(store, number)?.hash ?? null;
}

/**
 * The proven hash at `number`: its own (trustedHash), or the parent hash the proven block above it names (the
 * recorded chain's header, or the proven run's link).
 */
export function provenHash(store: Store, number: number): Hash | null {
  const own = trustedHash(store, number);
  if (own !== null || number < 0) return own;
  const link = readHistoryLink(store, number + 1);
  if (link) return link.parentHash;
  const above = getCanonicalHash(store, number + 1);
  const header = above ? getHeaderBytes(store, above, number + 1) : undefined;
  return header ? decodeHeader(header).parentHash : null;
}

/**
 * The blocks of [from, to] when every one lies below the recorded chain and was recorded there by history — proven
 * canonical (its own link in `history.canonical`) and verified, with all of its material (header, body, receipts) —
 * by an earlier chunk of a job, a cold backfill or an on-demand fill; else null. A chunk over such blocks needs
 * nothing from the source: two cold backfills over one range fetch and verify it once.
 */
export function historyRecorded(store: Store, from: number, to: number): Array<BlockRef> | null {
  const blocks: Array<BlockRef> = [];
  for (let number = from; number <= to; number += 1) {
    const link = readHistoryLink(store, number);
    if (link === undefined) return null;
    const key = hexToBytes(link.hash);
    if (getHeaderBytes(store, key, number) === undefined || getBodyBytes(store, key, number) === undefined || getReceiptsBytes(store, key, number) === undefined) return null;
    blocks.push({ number, hash: link.hash });
  }
  return blocks;
}

/**
 * Proves the canonical hash at `target` (below the recorded chain) by walking headers down from the lowest trusted
 * block. Returns the proven hash. Throws HistoryBlockError naming the first header that does not link.
 */
export async function anchorDown(store: Store, source: HistorySource, target: number, signal?: AbortSignal): Promise<Hash> {
  const known = provenHash(store, target);
  if (known) return known;
  const lowest = lowestCanonical(store);
  if (lowest && target >= lowest.number) throw new HistoryBlockError(target, `no canonical block is recorded at this height (the recorded chain starts at ${lowest.number})`);
  if (source.canonicalLink) {
    const link = await source.canonicalLink(target);
    signal?.throwIfAborted();
    await store.write(() => putHistoryLinks(store, [link]));
    return link.hash;
  }
  if (!lowest) throw new HistoryBlockError(target, 'the node has recorded no canonical block yet, so there is nothing to anchor history to');
  // From the lowest proven block above the target: the floor of the run below the recorded chain, or a run a
  // self-proving source started lower down.
  let top: HeaderLink = lowestLinkAbove(store, target) ?? lowest;
  while (top.number > target) {
    signal?.throwIfAborted();
    const high = top.number - 1;
    const low = Math.max(target, high - WALK_BATCH + 1);
    const links: HeaderLink[] = [];
    let expected = top.parentHash;
    let n = high;
    // Headers the store already holds under the expected hash are verified material: no need to ask the source.
    for (; n >= low; n -= 1) {
      const bytes = getHeaderBytes(store, hexToBytes(expected), n);
      if (!bytes) break;
      const header = decodeHeader(bytes);
      if (header.number !== n) break;
      links.push({ number: n, hash: expected, parentHash: header.parentHash });
      expected = header.parentHash;
    }
    if (n >= low) {
      const fetched = await source.fetchHeaders(low, n, expected);
      for (let i = fetched.length - 1; i >= 0; i -= 1) {
        const link = fetched[i]!;
        if (link.hash !== expected) throw notCanonical(link.number, link.hash, expected);
        links.push(link);
        expected = link.parentHash;
      }
    }
    signal?.throwIfAborted();
    await store.write(() => putHistoryLinks(store, links));
    top = links.at(-1)!;
  }
  return top.hash;
}

export function notCanonical(number: number, hash: Hash, expected: Hash): HistoryBlockError {
  return new HistoryBlockError(number, `not the canonical chain: the source's block ${number} has hash ${hash}, but the proven canonical block ${number + 1} names parent ${expected}`);
}

/**
 * Checks that `blocks` (ascending, consecutive, each verified against its header, linked to each other) end in the
 * proven hash at their top, and that every block with a proven hash has it.
 */
export function checkProven(store: Store, blocks: readonly HistoryBlock[]): void {
  for (let i = blocks.length - 1; i >= 0; i -= 1) {
    const block = blocks[i]!;
    const proven = i === blocks.length - 1 ? provenHash(store, block.number) : trustedHash(store, block.number);
    if (i === blocks.length - 1 && proven === null) throw new HistoryBlockError(block.number, 'no proven canonical hash at this height to link the block to');
    if (proven !== null && proven !== block.hash) throw notCanonical(block.number, block.hash, proven);
  }
}

/**
 * Fetches a chunk from its sources and records it. The chunk is cut where a source's range ends (source-order.ts);
 * from the top piece down, each piece is asked of its sources in order until one serves it proven: anchored (the
 * top piece's top is walked down to from the trusted chain with that source), fetched by the source (which
 * verifies every block), one hash chain whose top is the proven hash at its height (the top piece) or the parent
 * the piece above names. A source that fails any of it is skipped for the piece (`skipped` hears why). The chunk
 * then links to the block below (its trusted hash, else `belowFallback`'s), every block with a proven hash has it,
 * and it is recorded with its links (unless the lane is stopping). Answers the blocks' numbers and hashes,
 * ascending; throws HistoryBlockError naming a bad block, or the block no source served and each one's reason.
 */
export async function fetchProvenChunk(
  store: Store, order: readonly HistorySource[], chunk: { readonly from: number; readonly to: number },
  options: { readonly belowFallback: () => Hash | null; readonly signal: AbortSignal; readonly stopping: () => boolean; readonly skipped?: (failure: SourceFailure) => void; readonly txIndex?: DeferredTxIndex },
): Promise<Array<BlockRef>> {
  const blocks = await fetchOrdered(store, order, chunk.from, chunk.to, options.signal, options.skipped);
  checkHashChain(blocks, chunk.from, trustedHash(store, chunk.from - 1) ?? options.belowFallback(), null);
  checkProven(store, blocks);
  if (!options.stopping()) await recordProven(store, blocks, order.some((source) => source.recordsNeeded), options.txIndex);
  return blocks.map((block) => ({ number: block.number, hash: block.hash }));
}

/**
 * Blocks from..to (below or within the recorded chain), each piece from the first of its sources that serves it
 * anchored, verified and linked to the proven hash above it; ascending.
 */
export async function fetchOrdered(
  store: Store, order: readonly HistorySource[], from: number, to: number, signal: AbortSignal, skipped?: (failure: SourceFailure) => void,
): Promise<HistoryBlock[]> {
  const pieces = rangePieces(order, from, to);
  const parts: HistoryBlock[][] = [];
  let above: HistoryBlock | null = null;
  for (let i = pieces.length - 1; i >= 0; i -= 1) {
    const piece = pieces[i]!;
    const topLink: HistoryBlock | null = above;
    const part = await fromFirstThatServes(piece, async (source) => {
      // The chunk's top links to a proven canonical hash: below the recorded chain, headers are walked down to it first.
      const topHash = topLink === null ? await anchorDown(store, source, piece.to, signal) : topLink.parentHash;
      const fetched = await source.fetchRange(piece.from, piece.to, topHash);
      if (fetched.length !== piece.to - piece.from + 1) throw new HistoryBlockError(piece.from, `the source answered ${fetched.length} blocks for ${piece.from}-${piece.to}`);
      checkHashChain(fetched, piece.from, null, null);
      const top = fetched.at(-1)!;
      if (top.hash !== topHash) throw notCanonical(top.number, top.hash, topHash);
      return fetched;
    }, signal, skipped);
    parts.unshift(part);
    above = part[0]!;
  }
  return parts.flat();
}

/**
 * Records proven blocks in one write transaction: material (when the source's blocks are not recorded already),
 * the links of those below the recorded chain, and their transactions in the canonical transaction index — at once,
 * or, with `deferred` (a history job's chunks), listed as pending and buffered there (tx-index-batch.ts).
 */
export async function recordProven(store: Store, blocks: readonly HistoryBlock[], material: boolean, deferred?: DeferredTxIndex): Promise<void> {
  const lowest = lowestCanonical(store);
  const below = blocks.filter((block) => lowest === null || block.number < lowest.number);
  const pending = below.length === 0 ? null : [below[0]!.number, below.at(-1)!.number] as const;
  await store.write(() => {
    if (material) for (const block of blocks) putBlockMaterial(store, block.material);
    if (below.length === 0) return;
    putHistoryLinks(store, below.map((block) => ({ number: block.number, hash: block.hash, parentHash: block.parentHash })));
    if (deferred) markTxIndexPending(store, pending!);
    else for (const block of below) indexTransactions(store, block.material.hash, transactionHashesOfBody(block.material.body));
  });
  if (deferred && pending) await deferred.add(pending, below.map((block) => block.material));
}
