/**
 * The qualified sessions the node draws material from: per-peer request windows (`material_request_blocks`, halved
 * after a partial or failed answer, doubled again after 8 good windows), a pipeline of at most 4 requests per peer
 * under a global ceiling (`material_request_concurrency`), global bans for cryptographically invalid material, and
 * counters by outcome (no peer identity leaves this module).
 */
import type { EthSession } from './session.js';

export const PER_PEER_PIPELINE = 4;
export const GOOD_WINDOWS_TO_GROW = 8;

export type RequestLane = 'headers' | 'bodies' | 'receipts';
/**
 * Who a request is for. `history` (backfills from peers, actors/history's p2p source) has its own budget and never
 * takes the last slot: it may hold at most `historyConcurrency` requests (at most the global ceiling less one), and
 * at most `PER_PEER_PIPELINE − 1` on any one peer, so the live head always finds a slot.
 */
export type RequestPurpose = 'live' | 'history';

/** What one request asks of a session beside a free slot. */
export interface RequestClaim {
  readonly purpose?: RequestPurpose;
  /** Only sessions this accepts (e.g. peers whose announced range holds the blocks). */
  readonly accepts?: (session: EthSession) => boolean;
}
export type RequestOutcome = 'ok' | 'partial' | 'empty' | 'timeout' | 'invalid' | 'malformed' | 'closed';

export interface PoolOptions {
  readonly concurrency: number;
  readonly windowBlocks: number;
  readonly banMs: number;
  /** The history budget (requests in flight for `history`); default: half the global ceiling, at least 1. */
  readonly historyConcurrency?: number;
  readonly now?: () => number;
  /** Called for every finished request and every ban (metrics). */
  readonly onRequest?: (lane: RequestLane, outcome: RequestOutcome, bytes: number, purpose: RequestPurpose) => void;
  readonly onBan?: () => void;
}

interface PeerEntry {
  readonly session: EthSession;
  readonly key: string;
  window: number;
  goodWindows: number;
}

export interface PoolCounters {
  readonly requests: Map<string, number>;
  waitingMs: number;
  bans: number;
  bytes: number;
}

export class PeerPool {
  private readonly peers = new Map<string, PeerEntry>();
  private readonly banned = new Map<string, number>();
  private inFlight = 0;
  private historyInFlight = 0;
  private readonly waiters: (() => void)[] = [];
  readonly counters: PoolCounters = { requests: new Map(), waitingMs: 0, bans: 0, bytes: 0 };
  private readonly now: () => number;

  constructor(private readonly options: PoolOptions) {
    this.now = options.now ?? Date.now;
  }

  static keyOf(session: EthSession): string {
    return Buffer.from(session.peer.getId() ?? new Uint8Array()).toString('hex');
  }

  isBanned(key: string): boolean {
    const until = this.banned.get(key);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.banned.delete(key);
    return false;
  }

  get bannedCount(): number {
    for (const key of [...this.banned.keys()]) this.isBanned(key);
    return this.banned.size;
  }

  add(session: EthSession): void {
    const key = PeerPool.keyOf(session);
    this.peers.set(key, { session, key, window: this.options.windowBlocks, goodWindows: 0 });
    this.wake();
  }

  remove(session: EthSession): void {
    const key = PeerPool.keyOf(session);
    if (this.peers.get(key)?.session === session) this.peers.delete(key);
    this.wake();
  }

  get size(): number {
    return this.peers.size;
  }

  sessions(): EthSession[] {
    return [...this.peers.values()].map((entry) => entry.session);
  }

  /** Bans the peer of `session` globally for the ban period and closes it. */
  ban(session: EthSession): void {
    const key = PeerPool.keyOf(session);
    this.banned.set(key, this.now() + this.options.banMs);
    this.counters.bans++;
    this.options.onBan?.();
    this.peers.delete(key);
    session.disconnect();
    this.wake();
  }

  windowOf(session: EthSession): number {
    return this.peers.get(PeerPool.keyOf(session))?.window ?? this.options.windowBlocks;
  }

  /** The history budget in effect: never the whole global ceiling (the live head keeps at least one slot). */
  get historyConcurrency(): number {
    const ceiling = Math.max(1, this.options.concurrency - 1);
    return Math.max(1, Math.min(ceiling, this.options.historyConcurrency ?? Math.floor(this.options.concurrency / 2)));
  }

  /**
   * Waits for a request slot on the least busy peer (not in `exclude`, accepted by `claim.accepts`); null when no such
   * peer is connected. A `history` claim also waits for the history budget (class comment of RequestPurpose).
   */
  async acquire(exclude: ReadonlySet<EthSession> = new Set(), claim: RequestClaim = {}): Promise<EthSession | null> {
    const started = this.now();
    const history = claim.purpose === 'history';
    for (;;) {
      const candidates = [...this.peers.values()].filter((entry) => !exclude.has(entry.session) && !entry.session.isClosed && (claim.accepts?.(entry.session) ?? true));
      if (candidates.length === 0) return null;
      const pipeline = history ? PER_PEER_PIPELINE - 1 : PER_PEER_PIPELINE;
      const free = candidates.filter((entry) => entry.session.inFlight < pipeline).sort((a, b) => a.session.inFlight - b.session.inFlight);
      const budget = history ? this.historyInFlight < this.historyConcurrency && this.inFlight < this.options.concurrency - 1 : this.inFlight < this.options.concurrency;
      if (free.length > 0 && budget) {
        const session = free[0]!.session;
        this.inFlight++;
        if (history) this.historyInFlight++;
        this.counters.waitingMs += this.now() - started;
        return session;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Returns the slot taken by `acquire` (with the same purpose) and records the outcome (shrinking or growing the peer's window). */
  release(session: EthSession, lane: RequestLane, outcome: RequestOutcome, bytes = 0, purpose: RequestPurpose = 'live'): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (purpose === 'history') this.historyInFlight = Math.max(0, this.historyInFlight - 1);
    const name = `${lane}:${outcome}`;
    this.counters.requests.set(name, (this.counters.requests.get(name) ?? 0) + 1);
    this.counters.bytes += bytes;
    this.options.onRequest?.(lane, outcome, bytes, purpose);
    const entry = this.peers.get(PeerPool.keyOf(session));
    if (entry) {
      if (outcome === 'ok') {
        entry.goodWindows++;
        if (entry.goodWindows >= GOOD_WINDOWS_TO_GROW && entry.window < this.options.windowBlocks) {
          entry.window = Math.min(this.options.windowBlocks, entry.window * 2);
          entry.goodWindows = 0;
        }
      } else if (outcome !== 'invalid') {
        entry.window = Math.max(1, Math.floor(entry.window / 2));
        entry.goodWindows = 0;
      }
    }
    this.wake();
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
