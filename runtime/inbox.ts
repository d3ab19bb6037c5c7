import type { MessagePort } from 'node:worker_threads';
import type { Message } from './protocol.js';

export interface Delivery {
  readonly from: string;
  readonly askId: number | null;
  readonly message: Message;
  /** The port to answer an ask on. */
  readonly port: MessagePort;
}

/** FIFO of deliveries waiting for the actor; bounded by the mailbox credits senders hold. */
export class Inbox {
  private items: Array<Delivery | undefined> = [];
  private head = 0;

  get size(): number { return this.items.length - this.head; }

  push(delivery: Delivery): void {
    this.items.push(delivery);
  }

  shift(): Delivery | undefined {
    if (this.head >= this.items.length) return undefined;
    const delivery = this.items[this.head];
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return delivery;
  }
}
