/**
 * History from the peer pool by proven hash (the `p2p` history source when the history lane knows the canonical hash
 * of a range's top block): headers are asked by hash, descending from that hash (`GetBlockHeaders` with a hash
 * origin, reverse), each answer checked to be exactly the chain the proven hash names — its first header that hash,
 * each next one its predecessor's parent. A peer on another branch (a fork consistent in itself, which asked by
 * number answers its own blocks) does not hold the hash: it answers nothing, or headers that are not the ones asked
 * for, and is left out for the range (not banned: it serves its branch truthfully). Bodies and receipts then come
 * as for history by number (net/p2p/history-range.ts), from the peers that served the headers, every block verified whole.
 */
import { ask, NoPeersError, parseHeaders, sizeOf, type AcquiredBlock, type Header } from './acquire.js';
import { announced, claimFor, completeHistoryRange, DEFAULT_HEADERS_PER_REQUEST, HistoryUnavailableError, type HistoryRangeOptions } from './history-range.js';
import type { Hash } from '../eth/hex.js';
import type { EthSession } from './session.js';

/** Headers `from..to`, ascending, the chain whose block `to` has hash `topHash`. */
export async function fetchHistoryHeadersByHash(options: HistoryRangeOptions, topHash: Hash, from: number, to: number): Promise<Header[]> {
  return (await canonicalHeaders(options, topHash, from, to)).headers;
}

/** The headers, and the peers that served them: they hold that chain. */
async function canonicalHeaders(options: HistoryRangeOptions, topHash: Hash, from: number, to: number): Promise<{ headers: Header[]; holders: Set<EthSession> }> {
  const holders = new Set<EthSession>();
  const descending: Header[] = [];
  const exclude = new Set<EthSession>();
  const claim = claimFor(from, to);
  const perRequest = options.headersPerRequest ?? DEFAULT_HEADERS_PER_REQUEST;
  let expected = topHash;
  while (descending.length < to - from + 1) {
    const top = to - descending.length;
    const count = Math.min(top - from + 1, perRequest);
    const wanted = expected;
    let answer: Awaited<ReturnType<typeof ask<Header[]>>>;
    try {
      answer = await ask(options.pool, 'headers', exclude, async (session) => {
        const response = await session.getBlockHeaders({ hash: wanted }, count, 0, true, options.timeoutMs);
        const got = parseHeaders(response);
        if (got.length > count) throw new OffBranch(`${got.length} headers for ${count} asked`);
        let hash = wanted;
        got.forEach((h, i) => {
          if (h.hash !== hash || h.header.number !== top - i) throw new OffBranch(`header ${i} of a window down from ${wanted} (block ${top}) is block ${h.header.number} ${h.hash}`);
          hash = h.header.parentHash;
        });
        return { value: got, bytes: sizeOf(response), partial: got.length < count };
      }, claim);
    } catch (error) {
      if (error instanceof NoPeersError) throw new HistoryUnavailableError(top, `no connected peer serves the canonical header ${wanted} (peers on another branch are left out; ${announced(options.pool)})`);
      throw error;
    }
    if (answer === null) continue;
    if (answer.value.length === 0) {
      // Does not hold the hash (another branch, or history it does not keep): ask the others.
      exclude.add(answer.session);
      continue;
    }
    descending.push(...answer.value);
    holders.add(answer.session);
    expected = answer.value.at(-1)!.header.parentHash;
  }
  return { headers: descending.reverse(), holders };
}

/** Blocks `from..to`, verified, ascending, the chain whose block `to` has hash `topHash` (receipts too when `receipts`). */
export async function fetchHistoryRangeByHash(options: HistoryRangeOptions, topHash: Hash, from: number, to: number, receipts: boolean): Promise<AcquiredBlock[]> {
  const { headers, holders } = await canonicalHeaders(options, topHash, from, to);
  // Bodies and receipts from the peers that served the headers: a peer on another branch would answer nothing.
  // The headers stand across attempts: they are proven.
  const range = claimFor(from, to);
  const claim = { ...range, accepts: (session: EthSession) => holders.has(session) && (range.accepts?.(session) ?? true) };
  return completeHistoryRange(options, from, to, receipts, claim, async () => headers);
}

/** An answer that is not the chain asked for (another branch, or the wrong blocks): the peer is left out, not banned. */
class OffBranch extends Error {}
