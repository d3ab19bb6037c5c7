/**
 * The peers lane's answers to the `p2p` history source's asks (actors/sources/messages.ts), over its pool on the
 * `history` budget: `history.range` (what the connected peers announce), `history.headers` and `history.blocks` (by
 * number, net/p2p/history-range.ts; by hash down from `topHash` when the history lane names the proven one,
 * net/p2p/history-by-hash.ts). A block no peer serves answers `source_unavailable` with the block and the reason in
 * its details.
 */
import { CodedError } from '../../runtime/errors.js';
import { fetchHistoryHeaders, fetchHistoryRange, HistoryUnavailableError, servesRange, type HistoryRangeOptions } from '../../net/p2p/history-range.js';
import { fetchHistoryHeadersByHash, fetchHistoryRangeByHash } from '../../net/p2p/history-by-hash.js';
import type { PeerPool } from '../../net/p2p/peer-pool.js';
import type { HistoryBlocksAsk, HistoryHeadersAsk, HistoryRangeAsk, SourceReplies } from '../sources/messages.js';

export async function answerHistoryAsk<M extends HistoryBlocksAsk | HistoryHeadersAsk | HistoryRangeAsk>(pool: PeerPool, options: HistoryRangeOptions, message: M): Promise<SourceReplies[M['type']]>;
export async function answerHistoryAsk(pool: PeerPool, options: HistoryRangeOptions, message: HistoryBlocksAsk | HistoryHeadersAsk | HistoryRangeAsk): Promise<SourceReplies['history.blocks'] | SourceReplies['history.headers'] | SourceReplies['history.range']> {
  if (message.type === 'history.range') {
    const sessions = pool.sessions();
    const ranges = sessions.flatMap((session) => (session.range ? [session.range] : []));
    const latest = ranges.length === 0 ? null : Math.max(...ranges.map((r) => r.latest));
    return {
      peers: pool.size, announcing: ranges.length,
      earliest: ranges.length === 0 ? null : Math.min(...ranges.map((r) => r.earliest)), latest,
      holding: sessions.filter((session) => latest === null || servesRange(session, latest, latest)).length,
    };
  }
  try {
    if (message.type === 'history.headers') {
      const headers = message.topHash ? await fetchHistoryHeadersByHash(options, message.topHash, message.from, message.to) : await fetchHistoryHeaders(options, message.from, message.to);
      return headers.map((h) => ({ number: h.header.number, hash: h.hash, parentHash: h.header.parentHash }));
    }
    const blocks = message.topHash ? await fetchHistoryRangeByHash(options, message.topHash, message.from, message.to, message.receipts) : await fetchHistoryRange(options, message.from, message.to, message.receipts);
    return blocks.map((b) => ({ number: b.number, hash: b.hash, header: b.header, body: b.body, receipts: b.receipts }));
  } catch (error) {
    if (error instanceof HistoryUnavailableError) throw new CodedError('source_unavailable', error.message, { blockNumber: error.blockNumber, reason: error.reason });
    throw error;
  }
}
