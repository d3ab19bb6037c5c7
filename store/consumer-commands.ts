/**
 * Consumer commands: the messages the `outbox` lane accepts (asks from listeners); every reply is the consumer's record
 * after the change (store/consumers.ts), `deliver` adds the sequence range it handed out. Sequences
 * travel as decimal strings; credentials only as their salted hash.
 */
import type { ConsumerRecord, ConsumerRole, CredentialHash, StartPosition } from './consumers.js';

export type ConsumerRef = { readonly instance: string; readonly id: string };

export type CreateConsumer = ConsumerRef & {
  readonly type: 'consumer.create';
  readonly processor: string;
  readonly role: ConsumerRole;
  readonly leaseTtlSeconds: number;
  readonly credential: CredentialHash;
  /** `sequence` and `cursor` come with position `cursor`, already decoded and checked against this store. */
  readonly start: { readonly position: StartPosition; readonly sequence?: string; readonly cursor?: string };
};

export type DeleteConsumer = ConsumerRef & { readonly type: 'consumer.delete' };

/** Renews the lease; `redeliver` moves the delivered watermark back to the acknowledged one. */
export type RenewLease = ConsumerRef & { readonly type: 'consumer.lease'; readonly redeliver: boolean };

/** Hands out up to `limit` changes after the delivered watermark and advances it past them. */
export type DeliverChanges = ConsumerRef & { readonly type: 'consumer.deliver'; readonly limit: number };

export type AcknowledgeChanges = ConsumerRef & { readonly type: 'consumer.ack'; readonly sequence: string; readonly cursor: string };

export type OutboxMessage = CreateConsumer | DeleteConsumer | RenewLease | DeliverChanges | AcknowledgeChanges;

export interface Delivery {
  readonly record: ConsumerRecord;
  /** The batch is the changes with sequence in (after, through]; empty when they are equal. */
  readonly after: string;
  readonly through: string;
}
