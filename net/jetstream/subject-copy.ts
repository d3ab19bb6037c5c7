/**
 * A relay's copy of one instance's subject of the JetStream stream (docs/jetstream.md): an ordered consumer tails
 * the subject from its first retained message; every message becomes an entry (its change sequence range and its
 * stream sequence) with its changes decoded, so reads are synchronous, as the node's reads of its own log are.
 *
 * What the copy serves is the subject's current run: the messages after the newest reset marker (an epoch change
 * or a retention gap), of one store epoch, without gaps. A message that does not follow the run's last change
 * starts a new run at it (the changes between can no longer be served: cursors there are expired).
 *
 * Memory: decoded changes of all copies share one byte budget (`ChangeCache`); the least recently used entries
 * give their changes back when it is passed and keep only their range, and `prepare` fetches them again by stream
 * sequence when a reader needs them. Messages the stream removed (its limits) are found by `trim`, which drops
 * entries whose stream message is gone.
 */
import { DeliverPolicy, JetStreamApiError, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { MsgHdrs } from '@nats-io/transport-node';
import type { StoredChange } from '../../store/change-log.js';
import { decodePublication } from '../../store/publication-messages.js';
import { HEADER_COMMITTED_AT, HEADER_FIRST, HEADER_LAST, HEADER_RESET, HEADER_STORE } from './fenced-publisher.js';

interface Entry {
  readonly first: bigint;
  readonly last: bigint;
  readonly seq: number;
  readonly bytes: number;
  changes: StoredChange[] | null;
  loading: Promise<void> | null;
}

/** The byte budget every copy's decoded changes share; the least recently loaded or read are evicted first. */
export class ChangeCache {
  private readonly loaded = new Set<Entry>();
  private used = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.used;
  }

  hold(entry: Entry): void {
    if (this.loaded.has(entry)) return;
    this.loaded.add(entry);
    this.used += entry.bytes;
    for (const oldest of this.loaded) {
      if (this.used <= this.maxBytes || oldest === entry) break;
      this.release(oldest);
    }
  }

  /** `entry` was just read: it becomes the last to be evicted. */
  touch(entry: Entry): void {
    if (this.loaded.delete(entry)) this.loaded.add(entry);
  }

  release(entry: Entry): void {
    if (!this.loaded.delete(entry)) return;
    entry.changes = null;
    this.used -= entry.bytes;
  }
}

/** What a subject's run looks like to a reader. */
export interface CopyBounds {
  /** The last change sequence of the run (the reset marker's first minus 1 when none followed it; 0 before any). */
  readonly head: bigint;
  /** The first retained change sequence of the run, or null when it holds none. */
  readonly tail: bigint | null;
}

export interface SubjectCopyEvents {
  /**
   * New changes up to `last` arrived (committed at `committedAt` ms since the epoch, when the publisher knew);
   * `live`: the copy had caught up before (not a message of the initial read).
   */
  appended(last: bigint, committedAt: number | null, live: boolean): void;
  /** Changes fetched again (a reader waiting on them may go on). */
  loaded(): void;
  /** A reset marker or a break in the run: streams positioned before it must be reset. */
  reset(reason: string): void;
  /** The consumer stopped delivering at stream sequence `at` while the subject holds up to `last`: a new one starts. */
  stalled?(at: number, last: number): void;
}

export class SubjectCopy {
  private entries: Entry[] = [];
  private epochHex: string | null = null;
  private runHead = 0n;
  private lastSeq = 0;
  private ready = false;
  private readonly waiting: Array<() => void> = [];
  private consuming: { close(): Promise<void | Error> } | null = null;
  private stopped = false;
  /** Stream sequence of the subject's last message when the copy started: caught up once it is read. */
  private target = 0;
  /** `lastSeq` at the previous watch, and whether a new consumer is being started. */
  private seqAtWatch = 0;
  private restarting = false;

  constructor(
    readonly subject: string,
    private readonly stream: string,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly cache: ChangeCache,
    private readonly events: SubjectCopyEvents,
  ) {}

  /** The store epoch (hex) of the run, once a message was read. */
  get epoch(): string | null {
    return this.epochHex;
  }

  /** Whether the copy has read what the subject held when it started. */
  get caughtUp(): boolean {
    return this.ready;
  }

  bounds(): CopyBounds {
    const first = this.entries[0];
    return { head: this.runHead, tail: first ? first.first : null };
  }

  /** Resolves once the copy holds everything the subject held at start. */
  whenCaughtUp(): Promise<void> {
    return this.ready ? Promise.resolve() : new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Starts tailing the subject. */
  async start(): Promise<void> {
    try {
      const last = await this.jsm.streams.getMessage(this.stream, { last_by_subj: this.subject });
      this.target = last?.seq ?? 0;
    } catch (error) {
      if (!(error instanceof JetStreamApiError) || error.code !== 10037) throw error;
      this.target = 0;
    }
    if (this.target === 0) this.caughtUpNow();
    await this.consume();
  }

  /** An ordered consumer from the subject's first message, or from the one after the last read. */
  private async consume(): Promise<void> {
    const from = this.lastSeq > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.lastSeq + 1 } : {};
    const consumer = await this.js.consumers.get(this.stream, { filter_subjects: this.subject, ...from });
    const messages = await consumer.consume({ max_messages: 512 });
    this.consuming = messages;
    void (async () => {
      try {
        for await (const message of messages) {
          if (this.stopped) break;
          this.take(message);
        }
      } catch {
        // Ended by an error: `watch` starts a new consumer.
      }
    })();
  }

  /**
   * Starts a new consumer after the last message read when the current one stopped delivering while the subject
   * has more (its server died with it: the client library does not always notice). Called every few seconds.
   */
  async watch(): Promise<void> {
    if (this.stopped || this.restarting) return;
    const seen = this.lastSeq;
    let last = 0;
    try {
      last = (await this.jsm.streams.getMessage(this.stream, { last_by_subj: this.subject }))?.seq ?? 0;
    } catch {
      return;
    }
    const stalled = last > this.lastSeq && this.lastSeq === this.seqAtWatch;
    this.seqAtWatch = seen;
    if (!stalled || this.stopped) return;
    this.restarting = true;
    try {
      this.events.stalled?.(this.lastSeq, last);
      const closing = this.consuming?.close().catch(() => undefined);
      await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      if (!this.stopped) await this.consume();
    } catch {
      // The next watch tries again.
    } finally {
      this.restarting = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.consuming?.close();
    for (const entry of this.entries) this.cache.release(entry);
    this.entries = [];
  }

  private caughtUpNow(): void {
    if (this.ready) return;
    this.ready = true;
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  /** One message of the subject, in stream order. */
  private take(message: JsMsg): void {
    if (message.seq <= this.lastSeq) return;
    this.lastSeq = message.seq;
    const headers = message.headers;
    this.receive(message.seq, headers, message.data);
    if (message.seq >= this.target || message.info.pending === 0) this.caughtUpNow();
  }

  private receive(seq: number, headers: MsgHdrs | undefined, payload: Uint8Array): void {
    const first = BigInt(headers?.get(HEADER_FIRST) || '0');
    const last = BigInt(headers?.get(HEADER_LAST) || '0');
    const epoch = headers?.get(HEADER_STORE) || null;
    const reset = headers?.get(HEADER_RESET) || '';
    if (reset !== '' || (this.epochHex !== null && epoch !== this.epochHex)) {
      this.startRun(epoch, first);
      this.events.reset(reset || 'epoch_changed');
      if (reset !== '') return;
    } else if (this.epochHex === null) {
      this.startRun(epoch, first);
    } else if (first !== this.runHead + 1n) {
      // Not the next change of the run: what lies between is not in the stream.
      this.startRun(epoch, first);
      this.events.reset('retention_gap');
    }
    if (first === 0n || last < first) return;
    const entry: Entry = { first, last, seq, bytes: payload.byteLength + 64 * Number(last - first + 1n), changes: decodePublication(first, payload), loading: null };
    this.entries.push(entry);
    this.cache.hold(entry);
    this.runHead = last;
    const committed = Number(headers?.get(HEADER_COMMITTED_AT) || 'NaN');
    this.events.appended(last, Number.isFinite(committed) ? committed : null, this.ready);
  }

  private startRun(epoch: string | null, first: bigint): void {
    for (const entry of this.entries) this.cache.release(entry);
    this.entries = [];
    this.epochHex = epoch;
    this.runHead = first > 0n ? first - 1n : 0n;
  }

  /** Index of the entry holding the change after `after` (or the first entry past it), or -1 when none does. */
  private entryAfter(after: bigint): number {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.entries[mid]!.last <= after) low = mid + 1;
      else high = mid;
    }
    return low < this.entries.length ? low : -1;
  }

  /**
   * Changes with sequence > `after`, oldest first, at most `limit`, as far as they are at hand: a read stops at an
   * entry whose changes were evicted (fetching it again; `events.loaded` tells when).
   */
  read(after: bigint, limit: number): StoredChange[] {
    const out: StoredChange[] = [];
    for (let i = this.entryAfter(after); i >= 0 && i < this.entries.length && out.length < limit; i += 1) {
      const entry = this.entries[i]!;
      if (!entry.changes) {
        void this.load(entry).catch(() => undefined);
        break;
      }
      this.cache.touch(entry);
      for (const change of entry.changes) {
        if (change.sequence <= after) continue;
        out.push(change);
        if (out.length === limit) break;
      }
    }
    return out;
  }

  /** Fetches the evicted entries a read of `limit` changes after `after` needs; undefined when nothing is missing. */
  prepare(after: bigint, limit: number): Promise<void> | undefined {
    if (!this.ready) return this.whenCaughtUp().then(() => this.prepare(after, limit));
    const missing: Entry[] = [];
    let count = 0n;
    for (let i = this.entryAfter(after); i >= 0 && i < this.entries.length && count < BigInt(limit); i += 1) {
      const entry = this.entries[i]!;
      if (!entry.changes) missing.push(entry);
      else this.cache.touch(entry);
      count += entry.last - (entry.first > after ? entry.first : after + 1n) + 1n;
    }
    if (missing.length === 0) return undefined;
    return Promise.all(missing.map((entry) => this.load(entry))).then(() => undefined);
  }

  private load(entry: Entry): Promise<void> {
    if (entry.changes) return Promise.resolve();
    entry.loading ??= this.jsm.streams.getMessage(this.stream, { seq: entry.seq }).then((stored) => {
      entry.loading = null;
      if (!stored) {
        this.dropThrough(entry);
        this.events.loaded();
        return;
      }
      entry.changes = decodePublication(entry.first, stored.data);
      this.cache.hold(entry);
      this.events.loaded();
    }, (error: unknown) => {
      entry.loading = null;
      if (!(error instanceof JetStreamApiError) || error.code !== 10037) throw error;
      // Gone from the stream (its limits): it and everything older leave the run; readers there are expired.
      this.dropThrough(entry);
      this.events.loaded();
    });
    return entry.loading;
  }

  /** The stream no longer holds `entry` (its limits removed it): it and every older entry leave the run. */
  private dropThrough(entry: Entry): void {
    const index = this.entries.indexOf(entry);
    if (index < 0) return;
    for (const dropped of this.entries.splice(0, index + 1)) this.cache.release(dropped);
  }

  /** Whether the stream still holds message `seq`; null when it cannot be told (an error other than "no message"). */
  private async exists(seq: number): Promise<boolean | null> {
    try {
      return (await this.jsm.streams.getMessage(this.stream, { seq })) !== null;
    } catch (error) {
      return error instanceof JetStreamApiError && error.code === 10037 ? false : null;
    }
  }

  /**
   * Drops the entries whose stream messages the stream's limits removed (they are removed oldest first): the
   * oldest entry is probed, and while it is gone, the next.
   */
  async trim(): Promise<void> {
    while (!this.stopped && this.entries.length > 0) {
      const oldest = this.entries[0]!;
      if (await this.exists(oldest.seq) !== false) return;
      if (this.entries[0] === oldest) this.dropThrough(oldest);
    }
  }
}
