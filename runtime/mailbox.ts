/**
 * The control block of a bounded mailbox, in shared memory so that any sender thread can
 * reserve a slot (credit) without a round trip and wait on Atomics when the mailbox is full.
 *
 * Int32 cells: depth (reserved, not yet handled), capacity, state (open/closed), waiting senders,
 * heap used, heap committed and V8 external memory in KiB (written by the owning worker). BigInt64 cells: messages
 * handled, messages received.
 */
const DEPTH = 0;
const CAPACITY = 1;
const STATE = 2;
const WAITERS = 3;
const HEAP_KIB = 4;
const HEAP_TOTAL_KIB = 5;
const EXTERNAL_KIB = 6;
const HANDLED = 0;
const RECEIVED = 1;
const INT_CELLS = 8;
const BIG_CELLS = 2;

const OPEN = 0;
const CLOSED = 1;

export type MailboxBuffer = SharedArrayBuffer;

export function createMailboxBuffer(capacity: number): MailboxBuffer {
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`mailbox capacity must be a positive integer, got ${capacity}`);
  const sab = new SharedArrayBuffer(INT_CELLS * 4 + BIG_CELLS * 8);
  new Int32Array(sab, 0, INT_CELLS)[CAPACITY] = capacity;
  return sab;
}

/** A view over a mailbox control block; cheap to create in any thread. */
export class MailboxControl {
  private readonly ints: Int32Array;
  private readonly bigs: BigInt64Array;

  constructor(readonly buffer: MailboxBuffer) {
    this.ints = new Int32Array(buffer, 0, INT_CELLS);
    this.bigs = new BigInt64Array(buffer, INT_CELLS * 4, BIG_CELLS);
  }

  get depth(): number { return Atomics.load(this.ints, DEPTH); }
  get capacity(): number { return Atomics.load(this.ints, CAPACITY); }
  get closed(): boolean { return Atomics.load(this.ints, STATE) === CLOSED; }
  get handled(): bigint { return Atomics.load(this.bigs, HANDLED); }
  get received(): bigint { return Atomics.load(this.bigs, RECEIVED); }
  get heapUsedBytes(): number { return Atomics.load(this.ints, HEAP_KIB) * 1024; }
  get heapTotalBytes(): number { return Atomics.load(this.ints, HEAP_TOTAL_KIB) * 1024; }
  get externalBytes(): number { return Atomics.load(this.ints, EXTERNAL_KIB) * 1024; }

  /** Takes one slot if the mailbox has room; never blocks. */
  tryReserve(): boolean {
    for (;;) {
      const depth = Atomics.load(this.ints, DEPTH);
      if (depth >= Atomics.load(this.ints, CAPACITY) || this.closed) return false;
      if (Atomics.compareExchange(this.ints, DEPTH, depth, depth + 1) === depth) return true;
    }
  }

  /** Waits until a slot may have been freed or the mailbox was closed. Returns false when closed. */
  async waitForRoom(): Promise<boolean> {
    Atomics.add(this.ints, WAITERS, 1);
    try {
      for (;;) {
        if (this.closed) return false;
        const depth = Atomics.load(this.ints, DEPTH);
        if (depth < Atomics.load(this.ints, CAPACITY)) return true;
        const waited = Atomics.waitAsync(this.ints, DEPTH, depth, 1000);
        if (waited.async) await waited.value;
      }
    } finally {
      Atomics.sub(this.ints, WAITERS, 1);
    }
  }

  /** Called by the owner when a message arrives (received counter, for metrics). */
  noteReceived(count: number): void {
    Atomics.add(this.bigs, RECEIVED, BigInt(count));
  }

  /** Called by the owner after a message was handled: frees its slot and wakes waiting senders. */
  release(count = 1): void {
    Atomics.sub(this.ints, DEPTH, count);
    Atomics.add(this.bigs, HANDLED, BigInt(count));
    if (Atomics.load(this.ints, WAITERS) > 0) Atomics.notify(this.ints, DEPTH);
  }

  setHeapUsed(bytes: number): void {
    Atomics.store(this.ints, HEAP_KIB, Math.min(0x7fffffff, Math.round(bytes / 1024)));
  }

  /** The worker's V8 heap committed (total_heap_size) and its external memory (ArrayBuffer backing stores, etc.). */
  setHeapTotals(totalBytes: number, externalBytes: number): void {
    Atomics.store(this.ints, HEAP_TOTAL_KIB, Math.min(0x7fffffff, Math.round(totalBytes / 1024)));
    Atomics.store(this.ints, EXTERNAL_KIB, Math.min(0x7fffffff, Math.round(externalBytes / 1024)));
  }

  /** Marks the mailbox dead (its owner exited); every waiting sender wakes and sees it. */
  close(): void {
    Atomics.store(this.ints, STATE, CLOSED);
    Atomics.notify(this.ints, DEPTH);
  }

  isOpen(): boolean { return Atomics.load(this.ints, STATE) === OPEN; }
}
