/**
 * History from the peer pool (the `p2p` history source, served by the peers lane to actors/history): blocks by
 * number from the peers whose announced range (eth/69 status, then BlockRangeUpdate) holds them — an eth/68 peer
 * announces none, so it is asked, and an empty answer leaves it out for that range. Headers come by number, ascending,
 * each linked to the one before it (the history lane proves the run against its trusted anchor by parent hashes,
 * actors/history/anchor.ts); bodies and receipts come in windows over the pool's `history` budget (peer-pool.ts: it
 * never takes the live head's last slot) and every block is verified whole like live material (roots, bloom, gas).
 * Invalid material bans the peer that served it and the range is asked of the others; a block no connected peer
 * serves fails as `HistoryUnavailableError` naming the block and why.
 */
import { ask, completeBlocks, InvalidBlockError, NoPeersError, parseHeaders, sizeOf, type AcquiredBlock, type Header } from './acquire.js';
import type { PeerPool, RequestClaim } from './peer-pool.js';
import type { EthSession } from './session.js';

export interface HistoryRangeOptions {
  readonly pool: PeerPool;
  readonly timeoutMs: number;
  /** Verifies the blocks one answer completed (the CPU pool's batch task); each block's outcome in its place. */
  readonly verifyBatch: (blocks: readonly AcquiredBlock[]) => Promise<readonly (Error | null)[]>;
  /** Headers asked for per request (default 192: what geth and reth serve per answer at most is 1,024). */
  readonly headersPerRequest?: number;
  /** Times a range is asked again after a block failed verification (its peer banned); default 3. */
  readonly invalidRetries?: number;
}

/** A block no connected peer could serve verified. */
export class HistoryUnavailableError extends Error {
  override readonly name = 'HistoryUnavailableError';
  constructor(readonly blockNumber: number, readonly reason: string) {
    super(`block ${blockNumber}: ${reason}`);
  }
}

export const DEFAULT_HEADERS_PER_REQUEST = 192;

/** Whether `session`'s announced range holds `from..to` (a peer that announced none may). */
export function servesRange(session: EthSession, from: number, to: number): boolean {
  const range = session.range;
  return range === null || (range.earliest <= from && range.latest >= to);
}

export function claimFor(from: number, to: number): RequestClaim {
  return { purpose: 'history', accepts: (session) => servesRange(session, from, to) };
}

/** What the connected peers announced, for an error that names why nobody served a block. */
export function announced(pool: PeerPool): string {
  const ranges = pool.sessions().map((s) => (s.range ? `${s.range.earliest}..${s.range.latest}` : 'none (eth/68)'));
  return ranges.length === 0 ? 'no qualified peer is connected' : `connected peers announce ${ranges.join(', ')}`;
}

/** Headers `from..to`, ascending, each linked to the one before. */
export async function fetchHistoryHeaders(options: HistoryRangeOptions, from: number, to: number): Promise<Header[]> {
  const headers: Header[] = [];
  const exclude = new Set<EthSession>();
  const claim = claimFor(from, to);
  const perRequest = options.headersPerRequest ?? DEFAULT_HEADERS_PER_REQUEST;
  while (headers.length < to - from + 1) {
    const next = from + headers.length;
    const count = Math.min(to - next + 1, perRequest);
    const below = headers.at(-1) ?? null;
    let answer: Awaited<ReturnType<typeof ask<Header[]>>>;
    try {
      answer = await ask(options.pool, 'headers', exclude, async (session) => {
        const response = await session.getBlockHeaders({ number: next }, count, 0, false, options.timeoutMs);
        const got = parseHeaders(response);
        if (got.length > count) throw new InvalidHeaders(`${got.length} headers for ${count} asked`);
        got.forEach((h, i) => {
          if (h.header.number !== next + i) throw new InvalidHeaders(`header ${i} of a window from ${next} is block ${h.header.number}`);
          if (i > 0 && h.header.parentHash !== got[i - 1]!.hash) throw new InvalidHeaders(`header ${h.header.number} does not link to its predecessor`);
        });
        return { value: got, bytes: sizeOf(response), partial: got.length < count };
      }, claim);
    } catch (error) {
      if (error instanceof NoPeersError) throw new HistoryUnavailableError(next, `no connected peer serves its header (${announced(options.pool)})`);
      throw error;
    }
    if (answer === null) continue;
    const got = answer.value;
    if (got.length === 0 || (below !== null && got[0]!.header.parentHash !== below.hash)) {
      // Serves nothing from here, or another branch than the headers below came from: ask the others.
      exclude.add(answer.session);
      continue;
    }
    headers.push(...got);
  }
  return headers;
}

/**
 * The bodies (and receipts) of each attempt's `headers()` from the peers `claim` accepts, verified as live material.
 * A peer that serves an invalid part is banned and the next attempt asks the others (at most `invalidRetries`).
 */
export async function completeHistoryRange(options: HistoryRangeOptions, from: number, to: number, receipts: boolean, claim: RequestClaim, headers: () => Promise<Header[]>): Promise<AcquiredBlock[]> {
  const retries = options.invalidRetries ?? 3;
  for (let attempt = 0; ; attempt += 1) {
    const asked = await headers();
    try {
      return await completeBlocks({
        pool: options.pool, timeoutMs: options.timeoutMs, receipts, claim, verifyBatch: options.verifyBatch,
        verify: async (block) => {
          const [outcome] = await options.verifyBatch([block]);
          if (outcome) throw outcome;
        },
      }, asked);
    } catch (error) {
      if (error instanceof NoPeersError) throw new HistoryUnavailableError(from, `no connected peer serves the bodies${receipts ? ' and receipts' : ''} of blocks ${from}..${to} (${announced(options.pool)})`);
      if (error instanceof InvalidBlockError && attempt < retries) continue;
      if (error instanceof InvalidBlockError) throw new HistoryUnavailableError(error.blockNumber, error.message);
      throw error;
    }
  }
}

/** Blocks `from..to`, verified, ascending (receipts too when `receipts`); each attempt asks the headers again. */
export async function fetchHistoryRange(options: HistoryRangeOptions, from: number, to: number, receipts: boolean): Promise<AcquiredBlock[]> {
  return completeHistoryRange(options, from, to, receipts, claimFor(from, to), () => fetchHistoryHeaders(options, from, to));
}

/** Headers that break the request's own shape (a malformed answer: the peer is left out, not banned). */
class InvalidHeaders extends Error {}
