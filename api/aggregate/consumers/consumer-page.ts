/**
 * The body of one consumer batch (`GET …/consumers/{c}/changes`): the Page shape (spec §2.2) plus
 * the consumer's record, `{"data":[envelopes…],"nextCursor":…,"coverage":…,"consumer":…}`, written
 * straight into one buffer. Each change's stored envelope bytes are copied once, from lmdb-js's shared
 * read buffer into the page, as the log is read (a block's group at a time) — no Buffer per change, no
 * array of rows, no concatenation afterwards (those allocations were the listener's main cost per
 * change, most of it garbage collection).
 *
 * The changes (after, through] were just handed out by the outbox on another thread: this thread's
 * read snapshot may predate that commit (lmdb-js keeps a read transaction until a zero-delay timer
 * resets it, and the outbox's answer can arrive first), so the snapshot is renewed before reading.
 * A change missing from that range breaks the delivery invariant and throws rather than hand out a
 * page with a hole in it.
 *
 * Page buffers (megabytes at batches of 1,000) are reused: a fresh one per batch made V8 run full
 * collections for the external memory. The route hands `release` to the reply's `written` hook
 * (api/http.ts), called once uWS has copied the body; only then does the buffer go back to the pool.
 */
import { visitChanges, type ChangeLog } from '../../../store/change-log.js';
import type { Store } from '../../../store/store.js';

const OPEN = Buffer.from('{"data":[');
const COMMA = 0x2c;

export interface ConsumerPage {
  readonly body: Buffer;
  readonly count: number;
  /** Gives the body's memory back for later pages; call once the body was written (or dropped), then never touch it. */
  readonly release: () => void;
}

/** Free page buffers of this thread (each listener worker has its own module state). */
const pool: Buffer[] = [];
const POOL_SIZE = 4;
/** A buffer grown past this (an unusually large batch) is left to the garbage collector. */
const POOLED_MAX_BYTES = 64 * 1024 * 1024;
const FIRST_BUFFER_BYTES = 64 * 1024;

/**
 * Writes the page of the delivered changes (after, through]; `closing` renders everything after
 * the rows from the last change's cursor (null when the batch is empty).
 */
export function deliveredPage(
  store: Pick<Store, 'env'>, log: ChangeLog | null, after: bigint, through: bigint, closing: (lastCursor: string | null) => string,
): ConsumerPage {
  const writer = new PageWriter(OPEN);
  let lastCursor: string | null = null;
  let count = 0;
  if (log !== null && through > after) {
    store.env.resetReadTxn();
    let expected = after + 1n;
    visitChanges(log, after, (sequence, _operation, cursor, json) => {
      if (sequence !== expected) throw new Error(`changes ${after + 1n}..${through} were delivered but the log does not hold change ${expected}`);
      if (count > 0) writer.byte(COMMA);
      // The view is lmdb-js's shared read buffer, valid until the next read: copied into the page now.
      writer.bytes(json, 0, count === 0 ? Number(through - after) : 1);
      if (sequence === through) lastCursor = cursor;
      count += 1;
      expected += 1n;
      return sequence < through;
    });
    if (expected <= through) throw new Error(`changes ${after + 1n}..${through} were delivered but the log does not hold change ${expected}`);
  }
  writer.text(closing(lastCursor));
  const buffer = writer.buffer;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    if (pool.length < POOL_SIZE && buffer.length <= POOLED_MAX_BYTES) pool.push(buffer);
  };
  return { body: writer.done(), count, release };
}

/** A growing byte buffer sized from the first row (rows of one log are alike in size). */
class PageWriter {
  /** The buffer written into: from the pool, or a larger one once it had to grow. */
  buffer: Buffer;
  private length = 0;

  constructor(open: Buffer) {
    this.buffer = pool.pop() ?? Buffer.allocUnsafe(FIRST_BUFFER_BYTES);
    this.length = open.copy(this.buffer, 0);
  }

  byte(value: number): void {
    this.reserve(1);
    this.buffer[this.length++] = value;
  }

  /** Appends `source[offset..]`; `expectedRows` sizes the buffer on the first row. */
  bytes(source: Buffer, offset: number, expectedRows: number): void {
    const size = source.length - offset;
    this.reserve(expectedRows > 1 ? Math.ceil((size + 1) * expectedRows * 1.25) : size);
    this.length += source.copy(this.buffer, this.length, offset);
  }

  text(value: string): void {
    const size = Buffer.byteLength(value, 'utf8');
    this.reserve(size);
    this.length += this.buffer.write(value, this.length, 'utf8');
  }

  done(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  private reserve(size: number): void {
    if (this.length + size <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.length + size, this.buffer.length * 2));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}
