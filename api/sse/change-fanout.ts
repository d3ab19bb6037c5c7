/**
 * Fan-out of one processor's change log to its SSE connections. Connections are grouped by position
 * (the last sequence they were handed); each distinct position reads the next `batchChanges` changes
 * ONCE, renders them into one Buffer of stored frames, and writes that same Buffer to every
 * connection of the group, which then moves (and merges) to the new position. A full batch means more
 * may follow, so groups behind the head advance one batch per event-loop turn; new changes arrive
 * by `wake`. A group advances only while one of its connections is writable (a drain wakes it), so
 * it moves at the pace of its fastest reader and the others queue, up to their bound. A position
 * whose next change is no longer retained gets a terminal reset.
 */
import { sseFrame, type StoredChange } from '../../store/change-log.js';
import type { SseConnection } from './sse-connection.js';

export interface FanoutSource {
  /** Changes with sequence > `after`, oldest first, at most `limit`, from a fresh read snapshot. */
  read(after: bigint, limit: number): StoredChange[];
  /** Ends the connections whose next change was pruned before they read it. */
  expire(connections: readonly SseConnection[], position: bigint): void;
}

export class ChangeFanout {
  private readonly groups = new Map<bigint, Set<SseConnection>>();
  private scheduled: NodeJS.Immediate | null = null;

  constructor(
    private readonly source: FanoutSource,
    private readonly batchChanges: number,
    /** After a pass that wrote to `connections` streams, with how long the whole pass took. */
    private readonly onSweep?: (connections: number, seconds: number) => void,
  ) {}

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
      const changes = this.source.read(position, this.batchChanges);
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
      const frames = changes.length === 1 ? sseFrame(first) : Buffer.concat(changes.map(sseFrame));
      // The group left the map above, so a connection that closes while it is written to cannot change it.
      const moved = this.groupAt(next);
      for (const connection of group) {
        if (!connection.open || !connection.send(frames)) continue;
        connection.position = next;
        moved.add(connection);
        delivered += 1;
      }
      if (moved.size === 0) this.groups.delete(next);
      if (changes.length === this.batchChanges) behind = true;
    }
    if (delivered > 0) this.onSweep?.(delivered, (performance.now() - started) / 1000);
    if (behind) this.schedule();
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
