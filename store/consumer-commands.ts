/**
 * The data of the consumer commands the `outbox` lane carries out (its messages are actors/outbox/messages.ts): what a
 * new consumer is made of, which consumer a command names, and what a delivery hands out. Sequences travel as
 * decimal strings; credentials only as their salted hash.
 */
import type { ConsumerRecord, ConsumerRole, CredentialHash, StartPosition } from './consumers.js';

export type ConsumerRef = { readonly instance: string; readonly id: string };

export type ConsumerCreation = ConsumerRef & {
  readonly processor: string;
  readonly role: ConsumerRole;
  readonly leaseTtlSeconds: number;
  readonly credential: CredentialHash;
  /** `sequence` and `cursor` come with position `cursor`, already decoded and checked against this store. */
  readonly start: { readonly position: StartPosition; readonly sequence?: string; readonly cursor?: string };
};

export interface Delivery {
  readonly record: ConsumerRecord;
  /** The batch is the changes with sequence in (after, through]; empty when they are equal. */
  readonly after: string;
  readonly through: string;
}
