/**
 * `[[sources.history]] kind = "p2p"`: history from the devp2p peers the live lane (actors/peers) already holds, asked
 * through the `source` lane (asks `history.blocks`, `history.headers`, `history.range`; net/p2p/history-range.ts
 * does the requests on the pool's own history budget and verifies every block whole). A range is split into
 * `batch_blocks` pieces, `source_concurrency` of them in flight; a piece no connected peer serves is asked again
 * after a backoff (`max_retries`, `backoff_initial_ms` doubling up to `backoff_max_ms`) and then fails naming the
 * block and the reason. Whether a block is *the canonical* one is proven by the history lane (anchor.ts), as for
 * every source; when the lane names the proven hash of a range's top and the peers' answer by number is not that
 * chain (a peer on a fork), the range is asked again by hash, down from it (net/p2p/history-by-hash.ts), so the
 * forked peers are left out for it instead of failing the job.
 */
import { decodeHeader } from '../../net/eth/header.js';
import { hexToBytes, type Hash } from '../../net/eth/hex.js';
import { HistoryBlockError, type HeaderLink, type HistoryBlock } from '../../net/history/history-block.js';
import { CodedError } from '../../runtime/errors.js';
import { canonicalHead } from '../../store/chain-heads.js';
import type { Store } from '../../store/store.js';
import type { PeerHistoryBlock } from '../sources/messages.js';
import { sampleOf, type AskPeers, type HistorySource, type HistorySourceArgs } from './sources.js';

/** How long one piece may take in the peers lane (its own retries and the verification included). */
const pieceTimeoutMs = (args: HistorySourceArgs) => Math.max(30_000, 6 * args.requestTimeoutMs);

function toHistoryBlock(block: PeerHistoryBlock): HistoryBlock {
  return {
    number: block.number, hash: block.hash, parentHash: decodeHeader(block.header).parentHash,
    material: { number: block.number, hash: hexToBytes(block.hash, 32), header: block.header, body: block.body, receipts: block.receipts },
  };
}

/** Whether `items` are blocks from..to, each linked to the one before, the last with hash `topHash`. */
export function isChainTo(items: readonly HeaderLink[], from: number, to: number, topHash: Hash): boolean {
  if (items.length !== to - from + 1 || items.at(-1)!.hash !== topHash) return false;
  return items.every((item, i) => item.number === from + i && (i === 0 || item.parentHash === items[i - 1]!.hash));
}

/** A `source_unavailable` answer of the peers lane as the history lane's error naming the block. */
function historyError(error: unknown): unknown {
  if (error instanceof CodedError && error.code === 'source_unavailable' && typeof error.details?.['blockNumber'] === 'number') {
    return new HistoryBlockError(error.details['blockNumber'], String(error.details['reason'] ?? error.message));
  }
  return error;
}

export function p2pSource(args: HistorySourceArgs, store: Store, signal: AbortSignal, askPeers: AskPeers): HistorySource {
  const withRetries = async <T>(run: () => Promise<T>): Promise<T> => {
    let delay = args.backoffInitialMs;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await run();
      } catch (error) {
        const mapped = historyError(error);
        if (!(mapped instanceof HistoryBlockError) || attempt >= args.maxRetries || signal.aborted) throw mapped;
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(args.backoffMaxMs, delay * 2);
      }
    }
  };
  /** `from..to` in pieces of `batch_blocks`, `source_concurrency` at a time, results in block order. */
  const inPieces = async <T>(from: number, to: number, fetch: (a: number, b: number) => Promise<readonly T[]>): Promise<T[]> => {
    const pieces: Array<[number, number]> = [];
    for (let a = from; a <= to; a += args.batchBlocks) pieces.push([a, Math.min(to, a + args.batchBlocks - 1)]);
    const results: T[][] = new Array(pieces.length);
    let next = 0;
    const worker = async () => {
      while (next < pieces.length) {
        const index = next++;
        const [a, b] = pieces[index]!;
        results[index] = [...await withRetries(() => fetch(a, b))];
      }
    };
    await Promise.all(Array.from({ length: Math.min(args.concurrency, pieces.length) }, worker));
    return results.flat();
  };
  const blocksByNumber = (from: number, to: number) => inPieces(from, to, async (a, b) => {
    const blocks = await askPeers({ type: 'history.blocks', from: a, to: b, receipts: true }, pieceTimeoutMs(args));
    return blocks.map(toHistoryBlock);
  });
  const headersByNumber = (from: number, to: number) => inPieces<HeaderLink>(from, to, (a, b) => askPeers({ type: 'history.headers', from: a, to: b }, pieceTimeoutMs(args)));
  /**
   * By number first (pieces in flight at once); when the answer is not the chain `topHash` names (a peer on a fork
   * answered some piece), or by number fails, again by hash, down from `topHash` piece by piece: peers on another
   * branch hold none of it.
   */
  const provenRange = async <T extends HeaderLink>(from: number, to: number, topHash: Hash | null | undefined, byNumber: (a: number, b: number) => Promise<T[]>, byHash: (a: number, b: number, top: Hash) => Promise<readonly T[]>): Promise<T[]> => {
    if (!topHash) return byNumber(from, to);
    let fast: T[] | null = null;
    try {
      fast = await byNumber(from, to);
    } catch (error) {
      // Peers on different branches can leave a range by number unservable (windows that do not link): by hash then.
      if (!(error instanceof HistoryBlockError) || signal.aborted) throw error;
    }
    if (fast !== null && isChainTo(fast, from, to, topHash)) return fast;
    const parts: T[][] = [];
    let top: Hash = topHash;
    for (let b = to; b >= from; b -= args.batchBlocks) {
      const a = Math.max(from, b - args.batchBlocks + 1);
      const part = [...await withRetries(() => byHash(a, b, top))];
      parts.unshift(part);
      top = part[0]!.parentHash;
    }
    return parts.flat();
  };
  const fetchRange = (from: number, to: number, topHash?: Hash | null) => provenRange(from, to, topHash, blocksByNumber, async (a, b, top) => {
    const blocks = await askPeers({ type: 'history.blocks', from: a, to: b, receipts: true, topHash: top }, pieceTimeoutMs(args));
    return blocks.map(toHistoryBlock);
  });
  return {
    id: args.id, kind: 'p2p', recordsNeeded: true,
    fetchRange,
    fetchHeaders: (from, to, topHash) => provenRange(from, to, topHash, headersByNumber, (a, b, top) => askPeers({ type: 'history.headers', from: a, to: b, topHash: top }, pieceTimeoutMs(args))),
    // Peers answer by block, not by transaction: on-demand lookups by hash go to a source with a locator.
    transactionBlock: null,
    blockNumberOf: null,
    async probe(nodeChainId) {
      const started = performance.now();
      const range = await askPeers({ type: 'history.range' }, pieceTimeoutMs(args));
      const latencyMs = Math.round((performance.now() - started) * 100) / 100;
      if (range.peers === 0) throw new CodedError('source_unavailable', `history source '${args.id}': no qualified devp2p peer is connected`);
      // Peers that announce no range (eth/68) are asked up to the node's own head.
      const latestBlock = range.latest ?? canonicalHead(store)?.number ?? 0;
      const earliestBlock = range.earliest ?? 0;
      const sample = await sampleOf(async () => {
        try {
          return await fetchRange(latestBlock, latestBlock);
        } catch (error) {
          throw historyError(error);
        }
      });
      return {
        source: args.id, kind: 'p2p', chainId: nodeChainId, chainIdMatches: true, earliestBlock, latestBlock, latencyMs,
        peers: { connected: range.peers, holding: range.holding }, ...sample, probedAt: new Date().toISOString(),
      };
    },
  };
}
