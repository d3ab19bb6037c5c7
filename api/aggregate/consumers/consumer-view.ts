/** The JSON shape of one consumer (create, get, list, lease, ack; spec §4.9 leaves it open). Never carries the credential. */
import { leaseActive, type ConsumerRecord } from '../../../store/consumers.js';

export interface ConsumerView {
  readonly id: string;
  readonly processor: string;
  readonly instance: string;
  readonly role: string;
  readonly leaseTtlSeconds: number;
  readonly lease: { readonly expiresAt: string; readonly active: boolean };
  readonly start: { readonly position: string; readonly sequence: string };
  readonly delivered: { readonly sequence: string; readonly cursor: string };
  readonly acknowledged: { readonly sequence: string; readonly cursor: string };
  readonly createdAt: string;
}

export function consumerView(record: ConsumerRecord, nowMs: number): ConsumerView {
  return {
    id: record.id,
    processor: record.processor,
    instance: record.instance,
    role: record.role,
    leaseTtlSeconds: record.leaseTtlSeconds,
    lease: { expiresAt: new Date(record.leaseExpiresAt).toISOString(), active: leaseActive(record, nowMs) },
    start: { position: record.start.position, sequence: record.start.sequence.toString() },
    delivered: { sequence: record.delivered.toString(), cursor: record.deliveredCursor },
    acknowledged: { sequence: record.acknowledged.toString(), cursor: record.acknowledgedCursor },
    createdAt: record.createdAt,
  };
}
