/**
 * Acquiring verified block material from the peer pool. After the merge `eth` has no head gossip, so a step asks a
 * peer for the headers after the local head (by number, ascending); when the first one does not link to the local
 * head, it walks parent hashes (by hash, descending) from that candidate down to a block the node already verified,
 * bounded by `maxReorgDepth`. Headers are checked on arrival (hash of a by-hash origin, numbers, parent links);
 * bodies and receipts are fetched in windows spread over the pool and each block is verified whole (roots, bloom,
 * gas) before anything is returned. Invalid material bans its peer; timeouts and partial answers shrink that peer's
 * window and are retried on another peer or later, in their own lane (headers, bodies, receipts).
 */
import { BlockVerificationError, EthFormatError } from '../eth/errors.js';
import { decodeHeader, type BlockHeader } from '../eth/header.js';
import { type Hash } from '../eth/hex.js';
import { keccak256Hex } from '../eth/keccak.js';
import { EMPTY_TRIE_ROOT } from '../eth/trie-root.js';
import type { PeerPool, RequestClaim, RequestLane, RequestOutcome } from './peer-pool.js';
import { SessionError, type EthSession } from './session.js';
import type { ItemsResponse } from './eth-messages.js';
import { copyBytes } from './frame-crypto.js';
import type { BlockRef } from '../../store/chain-types.js';

export interface AcquiredBlock {
  readonly number: number;
  readonly hash: Hash;
  readonly header: Uint8Array;
  readonly body: Uint8Array;
  /** eth/69 receipt list; null when the acquisition fetched none. */
  readonly receipts: Uint8Array | null;
}

export interface AcquireOptions {
  readonly pool: PeerPool;
  readonly local: BlockRef;
  /** Number of a block the node has verified and recorded, by hash. */
  readonly isKnown: (hash: Hash) => boolean;
  /** Verifies one block whole; throws (BlockVerificationError or a format error) when it does not match. */
  readonly verify: (block: AcquiredBlock) => Promise<void>;
  /**
   * Verifies the blocks completed by one answer together (one pool task instead of one per block); each block's
   * outcome in its place: null when it verified, else the error `verify` would have thrown. Used instead of `verify`
   * when given.
   */
  readonly verifyBatch?: (blocks: readonly AcquiredBlock[]) => Promise<readonly (Error | null)[]>;
  readonly maxReorgDepth: number;
  readonly timeoutMs: number;
  /** Headers asked for per step (the branch length one step may add). */
  readonly maxHeaders: number;
  /** Fetch receipts too (default true); false for a source that has none (a chain file's blocks). */
  readonly receipts?: boolean;
  /**
   * The bloom check before receipts (`log-interest.ts`): receipts are asked for only for blocks whose verified
   * header this accepts; the others are verified and returned without receipts (`receipts: null`). Default: all.
   */
  readonly receiptsFor?: (header: BlockHeader) => boolean;
  /** Headers after `local` asked for by the previous step (its `ahead`); used when they follow this very head. */
  readonly ahead?: HeadersAhead | null;
  /** Which budget the requests draw on and which peers may serve them (peer-pool.ts); default: live, any peer. */
  readonly claim?: RequestClaim;
}

/**
 * The headers after a step's new tip, asked for while that step was still fetching bodies and receipts (so the
 * next step starts without waiting for a headers round trip). Only the next step that starts from `after` uses them.
 */
export interface HeadersAhead {
  readonly after: BlockRef;
  readonly headers: Promise<readonly Header[] | null>;
}

export interface AcquireResult {
  /** Verified blocks, parents first, from the fork point (exclusive) to the new tip. */
  readonly branch: readonly AcquiredBlock[];
  readonly head: BlockRef;
  /** True when the peers had headers after the head: ask again at once (an empty answer means caught up). */
  readonly behind: boolean;
  readonly reorged: boolean;
  /** The headers after `head`, already asked for when the peers had more (pass as the next step's `ahead`). */
  readonly ahead: HeadersAhead | null;
}

export class NoPeersError extends Error {
  constructor() {
    super('no qualified peer is connected');
    this.name = 'NoPeersError';
  }
}

export class ReorgTooDeepError extends Error {
  constructor(depth: number) {
    super(`the peers' chain leaves the verified chain more than ${depth} blocks below the head`);
    this.name = 'ReorgTooDeepError';
  }
}

class InvalidMaterial extends Error {}

export interface Header {
  readonly bytes: Uint8Array;
  readonly hash: Hash;
  readonly header: BlockHeader;
}

/**
 * Each item copied out of its message: a response's items are views into one decoded message (up to megabytes),
 * and the structured clone that takes a block to the verification pool copies a view's whole underlying buffer,
 * so a view would cost the whole message per block (and keep it alive as long as any of its blocks).
 */
const owned = copyBytes;

/**
 * A body or receipt list copied out of its message into shared memory: the structured clone that takes the block to
 * the verification pool then shares these bytes instead of copying them (a profile of the p2p history path put
 * that copy, piscina's `postTask`, at 14% of the fetching thread). Nothing writes to them after this copy.
 */
function ownedShared(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(new SharedArrayBuffer(bytes.length));
  out.set(bytes);
  return out;
}

export function parseHeaders(response: ItemsResponse): Header[] {
  return response.items.map((item) => {
    const bytes = owned(item);
    return { bytes, hash: keccak256Hex(bytes), header: decodeHeader(bytes) };
  });
}

function outcomeOf(error: unknown): RequestOutcome {
  if (error instanceof SessionError) return error.reason === 'timeout' ? 'timeout' : error.reason === 'malformed' ? 'malformed' : 'closed';
  if (error instanceof InvalidMaterial || error instanceof EthFormatError) return 'invalid';
  return 'malformed';
}

/**
 * One request on a pooled session; invalid material bans the peer. Returns null when the request failed softly.
 * Throws NoPeersError when no peer (not in `exclude`, accepted by `claim`) is connected.
 */
export async function ask<T>(
  pool: PeerPool, lane: RequestLane, exclude: Set<EthSession>, run: (session: EthSession) => Promise<{ value: T; bytes: number; partial: boolean }>, claim: RequestClaim = {},
): Promise<{ value: T; session: EthSession } | null> {
  const session = await pool.acquire(exclude, claim);
  if (!session) throw new NoPeersError();
  try {
    const { value, bytes, partial } = await run(session);
    pool.release(session, lane, partial ? 'partial' : 'ok', bytes, claim.purpose);
    return { value, session };
  } catch (error) {
    const outcome = outcomeOf(error);
    pool.release(session, lane, outcome, 0, claim.purpose);
    if (outcome === 'invalid') pool.ban(session);
    exclude.add(session);
    if (outcome === 'invalid' || outcome === 'malformed' || outcome === 'timeout' || outcome === 'closed') return null;
    throw error;
  }
}

/**
 * Headers asked for per step, per block of the peer's window: 24 × the default window of 8 fills a step of 192
 * (fewer, larger steps: each step waits once for its slowest answer); a shrunken window asks for fewer.
 */
const HEADERS_PER_WINDOW_BLOCK = 24;

export const sizeOf = (response: ItemsResponse) => response.items.reduce((sum, item) => sum + item.length, 0);

/** Headers after the local head, ascending and linked to each other (not yet to the local head). */
async function headersAfter(options: AcquireOptions, exclude: Set<EthSession>): Promise<readonly Header[] | null> {
  const { pool, local } = options;
  const answer = await ask(pool, 'headers', exclude, async (session) => {
    const limit = Math.min(options.maxHeaders, Math.max(1, pool.windowOf(session) * HEADERS_PER_WINDOW_BLOCK));
    const response = await session.getBlockHeaders({ number: local.number + 1 }, limit, 0, false, options.timeoutMs);
    const headers = parseHeaders(response);
    headers.forEach((h, i) => {
      if (h.header.number !== local.number + 1 + i) throw new InvalidMaterial(`header ${i} of a window from ${local.number + 1} is block ${h.header.number}`);
      if (i > 0 && h.header.parentHash !== headers[i - 1]!.hash) throw new InvalidMaterial(`header ${h.header.number} does not link to its predecessor`);
    });
    return { value: headers, bytes: sizeOf(response), partial: false };
  });
  return answer?.value ?? null;
}

/** Walks parent hashes from `hash` down to a known block; returns the branch parents-first. */
async function walkBack(options: AcquireOptions, hash: Hash, number: number, exclude: Set<EthSession>): Promise<Header[]> {
  const branch: Header[] = [];
  let want = hash;
  let wantNumber = number;
  while (!options.isKnown(want)) {
    if (branch.length > options.maxReorgDepth || options.local.number - wantNumber >= options.maxReorgDepth) throw new ReorgTooDeepError(options.maxReorgDepth);
    const answer = await ask(options.pool, 'headers', exclude, async (session) => {
      const limit = Math.max(1, Math.min(options.pool.windowOf(session) * 8, options.maxReorgDepth + 1));
      const response = await session.getBlockHeaders({ hash: want }, limit, 0, true, options.timeoutMs);
      const headers = parseHeaders(response);
      if (headers.length === 0) return { value: headers, bytes: 0, partial: true };
      let expected = want;
      for (const h of headers) {
        if (h.hash !== expected) throw new InvalidMaterial(`asked for header ${expected}, got ${h.hash}`);
        expected = h.header.parentHash;
      }
      return { value: headers, bytes: sizeOf(response), partial: false };
    });
    if (!answer || answer.value.length === 0) throw new NoPeersError();
    for (const h of answer.value) {
      if (options.isKnown(h.hash)) break;
      branch.unshift(h);
      want = h.header.parentHash;
      wantNumber = h.header.number - 1;
      if (options.isKnown(want)) break;
    }
  }
  return branch;
}

const RECEIPT_FIELDS = /failed verification: (receiptsRoot|logsBloom|gasUsed|receiptCount) /;

/**
 * Bodies and receipts of `headers`, in windows over the pool, each block verified whole as soon as its body and
 * receipts are both in (verification on the CPU pool overlaps the requests still in flight; the blocks one answer
 * completes go to `verifyBatch` together when it is given).
 */
export async function completeBlocks(options: Pick<AcquireOptions, 'pool' | 'verify' | 'verifyBatch' | 'timeoutMs' | 'receipts' | 'receiptsFor' | 'claim'>, headers: readonly Header[]): Promise<AcquiredBlock[]> {
  const bodies = new Map<Hash, { bytes: Uint8Array; session: EthSession | null }>();
  const receipts = new Map<Hash, { bytes: Uint8Array; session: EthSession | null }>();
  const withReceipts = options.receipts !== false;
  const EMPTY_LIST = Uint8Array.of(0xc0);
  // Blocks whose receipts are not wanted (bloom check) are verified without them.
  const skipReceipts = new Set<Hash>();
  for (const h of headers) {
    if (withReceipts && options.receiptsFor && !options.receiptsFor(h.header)) skipReceipts.add(h.hash);
    else if (h.header.receiptsRoot === EMPTY_TRIE_ROOT) receipts.set(h.hash, { bytes: EMPTY_LIST, session: null });
  }
  const byHash = new Map(headers.map((h) => [h.hash, h]));
  interface Piece { block: AcquiredBlock; body: { session: EthSession | null }; receipt: { session: EthSession | null } | null; verified: Promise<void> }
  const pieces = new Map<Hash, Piece>();
  // Blocks completed since the last flush: verified together (one batch per answer) or one by one.
  let queued: Piece[] = [];
  const startVerify = (hash: Hash) => {
    const h = byHash.get(hash);
    const body = bodies.get(hash);
    const receipt = withReceipts && !skipReceipts.has(hash) ? receipts.get(hash) : null;
    if (!h || !body || receipt === undefined || pieces.has(hash)) return;
    const block: AcquiredBlock = { number: h.header.number, hash, header: h.bytes, body: body.bytes, receipts: receipt?.bytes ?? null };
    const piece: Piece = { block, body, receipt, verified: Promise.resolve() };
    pieces.set(hash, piece);
    queued.push(piece);
  };
  const flush = () => {
    const batch = queued;
    queued = [];
    if (batch.length === 0) return;
    if (options.verifyBatch) {
      const outcomes = options.verifyBatch(batch.map((piece) => piece.block));
      batch.forEach((piece, i) => {
        piece.verified = outcomes.then((all) => {
          const error = all[i];
          if (error === undefined) throw new Error(`the batch verification returned no outcome for block ${piece.block.number}`);
          if (error !== null) throw error;
        });
      });
    } else {
      for (const piece of batch) piece.verified = options.verify(piece.block);
    }
    for (const piece of batch) piece.verified.catch(() => undefined);
  };
  const exclude = new Set<EthSession>();
  const fill = async (lane: 'bodies' | 'receipts', into: Map<Hash, { bytes: Uint8Array; session: EthSession | null }>) => {
    let attempts = 0;
    for (;;) {
      const missing = headers.filter((h) => !into.has(h.hash) && (lane === 'bodies' || !skipReceipts.has(h.hash))).map((h) => h.hash);
      if (missing.length === 0) return;
      if (attempts++ > 64) throw new NoPeersError();
      const windows: Hash[][] = [];
      const size = Math.max(1, Math.min(...options.pool.sessions().map((s) => options.pool.windowOf(s)), 64));
      for (let i = 0; i < missing.length; i += size) windows.push(missing.slice(i, i + size));
      if (options.pool.sessions().filter((s) => options.claim?.accepts?.(s) ?? true).every((s) => exclude.has(s))) exclude.clear();
      await Promise.all(windows.map(async (window) => {
        const answer = await ask(options.pool, lane, exclude, async (session) => {
          const response = lane === 'bodies' ? await session.getBlockBodies(window, options.timeoutMs) : await session.getReceipts(window, options.timeoutMs);
          if (response.items.length > window.length) throw new InvalidMaterial(`${response.items.length} items for ${window.length} hashes`);
          return { value: response.items, bytes: sizeOf(response), partial: response.items.length < window.length };
        }, options.claim);
        answer?.value.forEach((bytes, i) => {
          into.set(window[i]!, { bytes: ownedShared(bytes), session: answer.session });
          startVerify(window[i]!);
        });
        flush();
      }));
    }
  };
  for (const h of headers) startVerify(h.hash);
  flush();
  try {
    await Promise.all([fill('bodies', bodies), withReceipts ? fill('receipts', receipts) : Promise.resolve()]);
  } catch (error) {
    await Promise.allSettled([...pieces.values()].map((piece) => piece.verified));
    throw error;
  }
  for (const h of headers) startVerify(h.hash);
  flush();
  const ordered = headers.map((h) => pieces.get(h.hash)!);
  // The first failure, in block order, bans the peer that served the failing part.
  const outcomes = await Promise.allSettled(ordered.map((piece) => piece.verified));
  for (const [index, outcome] of outcomes.entries()) {
    if (outcome.status === 'fulfilled') continue;
    const error = outcome.reason as Error;
    const message = error?.message ?? '';
    if (!(error instanceof BlockVerificationError) && !/failed verification|RLP|transaction|receipt|body/i.test(message)) throw error;
    const { block, body, receipt } = ordered[index]!;
    const culprit = RECEIPT_FIELDS.test(message) ? receipt?.session ?? null : body.session;
    if (culprit && !culprit.isClosed) options.pool.ban(culprit);
    throw new InvalidBlockError(block.number, message);
  }
  return ordered.map((piece) => piece.block);
}

/** A block whose body or receipts failed verification; the peer that served them is banned. The step is retried. */
export class InvalidBlockError extends Error {
  constructor(readonly blockNumber: number, detail: string) {
    super(`block ${blockNumber} from a peer failed verification: ${detail}`);
    this.name = 'InvalidBlockError';
  }
}

/** One acquisition step: the verified branch from the local head (or a fork point below it) to the peers' next tip. */
export async function acquireStep(options: AcquireOptions): Promise<AcquireResult> {
  const exclude = new Set<EthSession>();
  let after: readonly Header[] | null = null;
  const ahead = options.ahead;
  if (ahead && ahead.after.hash === options.local.hash && ahead.after.number === options.local.number) {
    // An empty or failed answer asked earlier says little about now: ask again.
    const early = await ahead.headers;
    if (early !== null && early.length > 0) after = early;
  }
  while (after === null) {
    if (options.pool.size === 0) throw new NoPeersError();
    after = await headersAfter(options, exclude);
    if (after === null && options.pool.sessions().every((s) => exclude.has(s))) throw new NoPeersError();
  }
  let branch: readonly Header[];
  let reorged = false;
  if (after.length > 0 && after[0]!.header.parentHash === options.local.hash) {
    branch = after;
  } else {
    // Either the peers are on another branch above our head, or they have nothing after it: check our head's slot.
    const probe = after.length > 0 ? after[0]! : null;
    const startHash = probe ? probe.header.parentHash : null;
    if (startHash === null) {
      const head = await ask(options.pool, 'headers', new Set(), async (session) => {
        const response = await session.getBlockHeaders({ number: options.local.number }, 1, 0, false, options.timeoutMs);
        return { value: parseHeaders(response), bytes: sizeOf(response), partial: false };
      });
      const peerHead = head?.value[0];
      if (!peerHead || peerHead.hash === options.local.hash || peerHead.header.number !== options.local.number) {
        return { branch: [], head: options.local, behind: false, reorged: false, ahead: null };
      }
      branch = await walkBack(options, peerHead.hash, peerHead.header.number, new Set());
    } else {
      const below = await walkBack(options, startHash, probe!.header.number - 1, new Set());
      branch = [...below, ...after];
    }
    reorged = true;
  }
  if (branch.length === 0) return { branch: [], head: options.local, behind: false, reorged: false, ahead: null };
  // The peers had headers after the head: ask for the ones after this branch now, beside its bodies and receipts.
  const last = branch[branch.length - 1]!;
  const next: HeadersAhead | null = after.length > 0 && !reorged
    ? { after: { number: last.header.number, hash: last.hash }, headers: headersAfter({ ...options, local: { number: last.header.number, hash: last.hash } }, new Set()).catch(() => null) }
    : null;
  const blocks = await completeBlocks(options, branch);
  const tip = blocks[blocks.length - 1]!;
  return { branch: blocks, head: { number: tip.number, hash: tip.hash }, behind: after.length > 0, reorged, ahead: next };
}

/** Fetches and verifies one block by hash (the genesis, or the qualification anchor) from `session`. */
export async function fetchHeaderByHash(session: EthSession, hash: Hash, timeoutMs: number): Promise<Uint8Array | null> {
  const response = await session.getBlockHeaders({ hash }, 1, 0, false, timeoutMs);
  const first = response.items[0];
  if (!first) return null;
  if (keccak256Hex(first) !== hash) throw new InvalidMaterial(`asked for header ${hash}, got ${keccak256Hex(first)}`);
  return first;
}

export { InvalidMaterial };
