/**
 * Fan-out of one processor's change log to its SSE connections. Connections are grouped by position
 * (the last sequence they were handed); each distinct position reads the next `batchChanges` changes
 * (completed to the end of the block they stop in: a block's burst goes out in one write) ONCE, renders them into one chunk of stored frames, and writes that same chunk to every
 * connection of the group (the same Buffer to every identity stream, the same deflate segment to every gzip one, sse-encoding.ts), which then moves (and merges) to the new position. A full batch means more
 * may follow, so groups behind the head advance one batch per event-loop turn; new changes arrive
 * by `wake`. A group advances only while one of its connections is writable (a drain wakes it), so
 * it moves at the pace of its fastest reader and the others queue, up to their bound. A position
 * whose next change is no longer retained gets a terminal reset.
 *
 * Timing (metrics only): `committed` records when each notified range of sequences was committed, and
 * a pass reports, for a sample of the streams it writes to (every 16th, and the last of a group), how
 * long after the commit of the oldest change it hands them that stream got its frame.
 */
import { sseFrame, type StoredChange } from '../../store/change-log.js';
import type { SseConnection } from './sse-connection.js';
import { SseChunk } from './sse-encoding.js';

export interface FanoutSource {
  /** Changes with sequence > `after`, oldest first, at most `limit`, from a fresh read snapshot. */
  read(after: bigint, limit: number): StoredChange[];
  /** Ends the connections whose next change was pruned before they read it. */
  expire(connections: readonly SseConnection[], position: bigint): void;
}

/** Every how many streams of a group a pass samples the commit → write time. */
const WRITE_SAMPLE_EVERY = 16;
/** The most changes one write hands a stream when it completes a block past `batchChanges`. */
export const MAX_BURST_CHANGES = 16_384;
/** Commit times kept: far more than the notices a pass can be behind by while live. */
const COMMITS_KEPT = 256;

/** When the changes `from`..`to` (inclusive) were committed, in ms since the epoch. */
interface CommitTime {
  readonly from: bigint;
  readonly to: bigint;
  readonly at: number;
}

export interface FanoutTiming {
  /** After a pass that wrote to `connections` streams, with how long the whole pass took. */
  readonly sweep?: (connections: number, seconds: number) => void;
  /** A sampled stream was handed a change `seconds` after that change's commit. */
  readonly written?: (seconds: number) => void;
}

/** Wall-clock ms since the epoch with sub-ms precision (comparable across worker threads). */
const wallMs = () => performance.timeOrigin + performance.now();

export class ChangeFanout {
  private readonly groups = new Map<bigint, Set<SseConnection>>();
  private scheduled: NodeJS.Immediate | null = null;
  private readonly commits: CommitTime[] = [];
  private lastCommitted: bigint | null = null;

  constructor(
    private readonly source: FanoutSource,
    private readonly batchChanges: number,
    private readonly timing: FanoutTiming = {},
  ) {}

  /** The changes up to `sequence` were committed at `at` (ms since the epoch). */
  committed(sequence: bigint, at: number): void {
    const from = this.lastCommitted !== null && this.lastCommitted < sequence ? this.lastCommitted + 1n : sequence;
    this.lastCommitted = sequence;
    this.commits.push({ from, to: sequence, at });
    if (this.commits.length > COMMITS_KEPT) this.commits.shift();
  }

  private commitTimeOf(sequence: bigint): number | null {
    for (let i = this.commits.length - 1; i >= 0; i -= 1) {
      const commit = this.commits[i]!;
      if (commit.from <= sequence && sequence <= commit.to) return commit.at;
      if (commit.to < sequence) return null;
    }
    return null;
  }

  join(connection: SseConnection): void {
    this.groupAt(connection.position).add(connection);
    this.schedule();
  }

  leave(connection: SseConnection): void {
    const group = this.groups.get(connection.position);
    if (!group) return;
    group.delete(connection);
    if (group.size === 0) this.groups.delete(connection.position);
  }

  /** The log grew, or a connection drained: positions advance. */
  wake(): void {
    if (this.groups.size > 0) this.schedule();
  }

  close(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    this.groups.clear();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = null;
      this.pump();
    });
  }

  private pump(): void {
    const started = performance.now();
    let behind = false;
    let delivered = 0;
    for (const [position, group] of [...this.groups]) {
      if (this.groups.get(position) !== group) continue;
      let open = false;
      let writable = false;
      for (const connection of group) {
        if (!connection.open) continue;
        open = true;
        if (connection.writable) {
          writable = true;
          break;
        }
      }
      if (open && !writable) continue;
      this.groups.delete(position);
      if (!open) continue;
      const changes = this.readBurst(position);
      const first = changes[0];
      if (!first) {
        this.regroup(position, group);
        continue;
      }
      if (first.sequence !== position + 1n) {
        this.source.expire([...group].filter((connection) => connection.open), position);
        continue;
      }
      const next = changes[changes.length - 1]!.sequence;
      // One chunk for the whole group: identity streams share its bytes, gzip streams its one deflate segment.
      const frames = new SseChunk(changes.length === 1 ? sseFrame(first) : Buffer.concat(changes.map(sseFrame)));
      const committedAt = this.timing.written ? this.commitTimeOf(first.sequence) : null;
      const written = this.write(group, next, frames, committedAt);
      delivered += written;
      if (changes.length >= this.batchChanges) behind = true;
    }
    if (delivered > 0) this.timing.sweep?.(delivered, (performance.now() - started) / 1000);
    if (behind) this.schedule();
  }

  /**
   * The next changes after `position`: `batchChanges` of them, and when that ends inside a block (the
   * next change has the same block number, read from its cursor), the rest of that block too — up to
   * MAX_BURST_CHANGES — so a stream receives a block's changes (hundreds for a token-balances instance)
   * in one write rather than split across passes. A block's changes are committed in one transaction,
   * so a read that stops short of its limit has reached the head and the block is whole.
   */
  private readBurst(position: bigint): StoredChange[] {
    const changes = this.source.read(position, this.batchChanges);
    if (changes.length < this.batchChanges) return changes;
    const block = changes[changes.length - 1]!.blockNumber;
    if (block === null) return changes;
    while (changes.length < MAX_BURST_CHANGES) {
      const limit = Math.min(this.batchChanges, MAX_BURST_CHANGES - changes.length);
      const more = this.source.read(changes[changes.length - 1]!.sequence, limit);
      let taken = 0;
      for (const change of more) {
        if (change.blockNumber !== block) break;
        changes.push(change);
        taken += 1;
      }
      if (taken < limit) break;
    }
    return changes;
  }

  /**
   * Hands `frames` to every open connection of `group` (which has left the map) and moves those that
   * took them to `next`; answers how many did. When no group waits at `next`, the same Set is re-keyed
   * there rather than copied connection by connection (the common case: a live group moves whole).
   */
  private write(group: Set<SseConnection>, next: bigint, frames: SseChunk, committedAt: number | null): number {
    const waiting = this.groups.get(next);
    if (!waiting) this.groups.set(next, group);
    let written = 0;
    // A connection that closes in its own send still has its old position, so `leave` cannot reach it here.
    for (const connection of group) {
      if (!connection.open || !connection.send(frames)) {
        if (!waiting) group.delete(connection);
        continue;
      }
      connection.position = next;
      waiting?.add(connection);
      if (committedAt !== null && written % WRITE_SAMPLE_EVERY === 0) this.timing.written!((wallMs() - committedAt) / 1000);
      written += 1;
    }
    if (committedAt !== null && written > 1 && (written - 1) % WRITE_SAMPLE_EVERY !== 0) this.timing.written!((wallMs() - committedAt) / 1000);
    if (!waiting && group.size === 0 && this.groups.get(next) === group) this.groups.delete(next);
    return written;
  }

  private groupAt(position: bigint): Set<SseConnection> {
    let group = this.groups.get(position);
    if (!group) {
      group = new Set();
      this.groups.set(position, group);
    }
    return group;
  }

  private regroup(position: bigint, connections: Iterable<SseConnection>): void {
    const group = this.groupAt(position);
    for (const connection of connections) if (connection.open) group.add(connection);
    if (group.size === 0) this.groups.delete(position);
  }
}
