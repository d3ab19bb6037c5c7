/**
 * The `outbox` lane's inbox (actors/outbox/actor.ts), and the replies to its asks: every consumer command's reply is
 * the consumer's record after the change (store/consumers.ts), `consumer.delete` whether one was deleted, `consumer.deliver`
 * adds the sequence range it handed out. Sequences travel as decimal strings; credentials only as their salted hash.
 *
 *   listeners → outbox   asks `consumer.create`, `consumer.delete`, `consumer.lease`, `consumer.deliver`, `consumer.ack`
 *   history   → outbox   ask `consumers.move` (a rebuild's promote or rollback, consumer-move.ts)
 *   publisher → outbox   notice `publication.published` (JetStream acknowledged an instance's changes up to `sequence`)
 */
import type { ConsumerRecord } from '../../store/consumers.js';
import type { ConsumerCreation, ConsumerRef, Delivery } from '../../store/consumer-commands.js';
import type { MovedConsumer } from './consumer-move.js';

export type { ConsumerCreation, ConsumerRef, Delivery } from '../../store/consumer-commands.js';

export type CreateConsumer = ConsumerCreation & { readonly type: 'consumer.create' };

export type DeleteConsumer = ConsumerRef & { readonly type: 'consumer.delete' };

/** Renews the lease; `redeliver` moves the delivered watermark back to the acknowledged one. */
export type RenewLease = ConsumerRef & { readonly type: 'consumer.lease'; readonly redeliver: boolean };

/** Hands out up to `limit` changes after the delivered watermark and advances it past them. */
export type DeliverChanges = ConsumerRef & { readonly type: 'consumer.deliver'; readonly limit: number };

export type AcknowledgeChanges = ConsumerRef & { readonly type: 'consumer.ack'; readonly sequence: string; readonly cursor: string };

/** Moves a processor's consumers (and its serving instance) from instance `from` to `to`. */
export type MoveConsumers = { readonly type: 'consumers.move'; readonly processor: string; readonly from: string; readonly to: string };

/** Retention keeps what is not yet published (while the outbox stays within `[budgets.outbox]`). */
export type PublishedNotice = { readonly type: 'publication.published'; readonly instance: string; readonly sequence: bigint };

export type OutboxInbox = PublishedNotice | CreateConsumer | DeleteConsumer | RenewLease | DeliverChanges | AcknowledgeChanges | MoveConsumers;

export interface OutboxReplies {
  readonly 'consumer.create': ConsumerRecord;
  readonly 'consumer.delete': boolean;
  readonly 'consumer.lease': ConsumerRecord;
  readonly 'consumer.deliver': Delivery;
  readonly 'consumer.ack': ConsumerRecord;
  readonly 'consumers.move': { readonly moved: MovedConsumer[] };
}
