import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { encode, decode } from './codec.js';
import { MailboxControl, type MailboxBuffer } from './mailbox.js';
import type { WireEntry } from './protocol.js';

const MAX_BATCH = 512;

interface Blocked {
  readonly entry: WireEntry;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

export class LinkClosedError extends Error {
  constructor(readonly to: string, reason: string) {
    super(`cannot deliver to actor '${to}': ${reason}`);
    this.name = 'LinkClosedError';
  }
}

/**
 * The sending end of one sender→receiver channel. Each message takes a slot (credit) in the
 * receiver's bounded mailbox before it is posted; when none is free the sender waits. Messages that
 * wait keep their order, and later sends queue behind them, so one sender's messages are never
 * reordered, dropped or duplicated. Replies to asks come back on the same port without credit.
 */
export class Link {
  private port: MessagePort | null = null;
  private mailbox: MailboxControl | null = null;
  private outbox: WireEntry[] = [];
  private readonly blocked: Blocked[] = [];
  private flushQueued = false;
  private pumping = false;
  private bindWaiters: Array<() => void> = [];
  private failure: string | null = null;

  constructor(
    readonly to: string,
    private readonly batching: boolean,
    private readonly onReply: (askId: number, ok: boolean, value: unknown) => void,
    private readonly requestConnect: (to: string) => void,
  ) {}

  get connected(): boolean { return this.port !== null; }
  get waitingSends(): number { return this.blocked.length; }

  bind(port: MessagePort, mailbox: MailboxBuffer): void {
    this.unbind();
    this.failure = null;
    this.port = port;
    this.mailbox = new MailboxControl(mailbox);
    port.on('message', (bytes: Uint8Array) => this.receive(bytes));
    const waiters = this.bindWaiters;
    this.bindWaiters = [];
    for (const wake of waiters) wake();
  }

  /** The receiver went away (crashed or stopped): entries not yet posted wait for the next binding. */
  unbind(): void {
    if (!this.port) return;
    this.port.removeAllListeners('message');
    // Replies the receiver posted before it went away may still be queued (a busy thread can see the exit first).
    for (let queued = receiveMessageOnPort(this.port); queued !== undefined; queued = receiveMessageOnPort(this.port)) this.receive(queued.message as Uint8Array);
    this.port.close();
    this.port = null;
    this.mailbox = null;
    this.outbox = [];
  }

  /** True after `fail` until the next `bind`. */
  get failed(): boolean {
    return this.failure !== null;
  }

  /** The receiver cannot come back (its lane failed or the system stops): waiting sends fail. */
  fail(reason: string): void {
    this.unbind();
    this.failure = reason;
    for (const blocked of this.blocked.splice(0)) blocked.reject(new LinkClosedError(this.to, reason));
    const waiters = this.bindWaiters;
    this.bindWaiters = [];
    for (const wake of waiters) wake();
  }

  send(entry: WireEntry): Promise<void> {
    if (this.failure !== null) return Promise.reject(new LinkClosedError(this.to, this.failure));
    if (this.blocked.length === 0 && this.mailbox !== null && this.mailbox.tryReserve()) {
      this.enqueue(entry);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      this.blocked.push({ entry, resolve, reject });
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.blocked.length > 0 && this.failure === null) {
        const mailbox = this.mailbox;
        if (mailbox === null || !mailbox.isOpen()) {
          await this.nextBinding();
          continue;
        }
        if (mailbox.tryReserve()) {
          const next = this.blocked.shift()!;
          this.enqueue(next.entry);
          next.resolve();
          continue;
        }
        this.flush();
        await mailbox.waitForRoom();
      }
    } finally {
      this.pumping = false;
    }
  }

  private nextBinding(): Promise<void> {
    return new Promise((resolve) => {
      this.bindWaiters.push(resolve);
      this.unbind();
      this.requestConnect(this.to);
    });
  }

  /**
   * Batching: entries wait for the end of the current event-loop turn (or until a batch is full)
   * and leave as one transfer. Asks leave at once, with whatever is queued before them.
   */
  private enqueue(entry: WireEntry): void {
    this.outbox.push(entry);
    if (!this.batching || entry[0] === 1 || this.outbox.length >= MAX_BATCH) return this.flush();
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.outbox.length === 0 || this.port === null) return;
    const bytes = encode(this.batching ? this.outbox : this.outbox[0]);
    this.outbox = [];
    this.port.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
  }

  private receive(bytes: Uint8Array): void {
    const decoded = decode<WireEntry | WireEntry[]>(bytes);
    const entries = isBatch(decoded) ? decoded : [decoded];
    for (const entry of entries) {
      if (entry[0] === 2) this.onReply(entry[1], entry[2], entry[3]);
    }
  }
}

/** A batch is an array of entries; a single entry is an array whose first item is its numeric kind. */
export function isBatch(decoded: WireEntry | WireEntry[]): decoded is WireEntry[] {
  return Array.isArray(decoded[0]);
}
