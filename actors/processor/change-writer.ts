/**
 * Appends a lane's changes to a change log as groups (store/change-log.ts): consecutive changes that
 * share their block, operation, finality, schema, origin and emission time are held and written as one
 * entry, its envelopes rendered with the log's cursors. `flush` writes what is held; call it before the
 * write transaction ends.
 */
import { encodeChangeGroup, GROUP_MAX_CHANGES, putChangeGroup, type ChangeGroupHead, type ChangeLog, type GroupedChange } from '../../store/change-log.js';

export class ChangeGroupWriter {
  #head: ChangeGroupHead | null = null;
  #first = 0n;
  #pending: GroupedChange[] = [];

  constructor(private readonly log: ChangeLog) {}

  /** Appends the change at `sequence` (one above the previous one added, within a group). */
  add(sequence: bigint, head: ChangeGroupHead, change: GroupedChange): void {
    const held = this.#head;
    if (held === null || !sameHead(held, head) || this.#pending.length >= GROUP_MAX_CHANGES || sequence !== this.#first + BigInt(this.#pending.length)) {
      this.flush();
      this.#head = head;
      this.#first = sequence;
    }
    this.#pending.push(change);
  }

  flush(): void {
    if (this.#head !== null && this.#pending.length > 0) putChangeGroup(this.log.changes, this.#first, encodeChangeGroup(this.log, this.#first, this.#head, this.#pending));
    this.#head = null;
    this.#pending = [];
  }
}

function sameHead(a: ChangeGroupHead, b: ChangeGroupHead): boolean {
  if (a === b) return true;
  return (a.block === b.block || (a.block.number === b.block.number && a.block.hash === b.block.hash && a.block.parentHash === b.block.parentHash && a.block.timestamp === b.block.timestamp))
    && a.operation === b.operation && a.finality === b.finality && a.schema === b.schema && a.emittedAt === b.emittedAt
    && (a.originKind ?? 'live') === (b.originKind ?? 'live') && a.originId === b.originId;
}
