/**
 * What each consumer call does to a record (spec §2.5), as pure functions over the record, the change log's bounds
 * and the time — shared by the node's outbox lane (actors/outbox/consumer-writes.ts, one LMDB transaction per call)
 * and a relay (its records in a JetStream key-value bucket, one compare-and-set per call).
 *
 * Lease rules: every consumer-scoped call (lease, deliver, acknowledge) extends the lease by `leaseTtlSeconds`. A
 * call that finds the lease expired starts a new session: the delivered watermark goes back to the acknowledged one
 * (what was handed out before may never have arrived), unless the changes after the acknowledged position were
 * pruned meanwhile — then 410 `cursor_expired`: the consumer must take a snapshot and be recreated.
 */
import { CodedError } from '../runtime/errors.js';
import type { ConsumerCreation } from './consumer-commands.js';
import { leaseActive, resumable, type ConsumerRecord, type LogBounds } from './consumers.js';

/** Extending a lease that still has more than this fraction of its TTL left is skipped when nothing else changes. */
const LEASE_REFRESH_FRACTION = 0.5;

/** The cursor of the change at a sequence (the log's own, or a block-less one when it is not retained). */
export type CursorAt = (sequence: bigint) => string;

/** A new consumer's record; `cursorAt` names its start. */
export function newConsumerRecord(creation: ConsumerCreation, bounds: LogBounds, cursorAt: CursorAt, nowMs: number): ConsumerRecord {
  const sequence = startSequence(creation, bounds);
  const cursor = creation.start.position === 'cursor' ? creation.start.cursor! : cursorAt(sequence);
  return {
    version: 1, processor: creation.processor, instance: creation.instance, id: creation.id, role: creation.role,
    leaseTtlSeconds: creation.leaseTtlSeconds, leaseExpiresAt: nowMs + creation.leaseTtlSeconds * 1000, createdAt: new Date(nowMs).toISOString(),
    credential: creation.credential, start: { position: creation.start.position, sequence },
    delivered: sequence, deliveredCursor: cursor, acknowledged: sequence, acknowledgedCursor: cursor,
  };
}

/** The record a consumer-scoped call works on: a lapsed lease starts a new session (see the file comment). */
export function session(found: ConsumerRecord, bounds: LogBounds, nowMs: number): ConsumerRecord {
  if (leaseActive(found, nowMs)) return found;
  if (!resumable(found.acknowledged, bounds)) throw expired(found, bounds);
  return rewind(found);
}

export function rewind(record: ConsumerRecord): ConsumerRecord {
  return record.delivered === record.acknowledged ? record : { ...record, delivered: record.acknowledged, deliveredCursor: record.acknowledgedCursor };
}

/** `lease {redeliver}`: the session's record, rewound when asked. */
export function leased(record: ConsumerRecord, redeliver: boolean, nowMs: number): ConsumerRecord {
  const rewound = redeliver ? rewind(record) : record;
  return { ...rewound, leaseExpiresAt: nowMs + record.leaseTtlSeconds * 1000 };
}

/** The next batch after the delivered watermark: the advanced record and the batch (after, through]. */
export function delivered(record: ConsumerRecord, bounds: LogBounds, limit: number, cursorAt: CursorAt): { record: ConsumerRecord; after: bigint; through: bigint } {
  if (!resumable(record.delivered, bounds)) throw expired(record, bounds);
  const through = batchEnd(record.delivered, limit, bounds);
  const advanced = through === record.delivered ? record : { ...record, delivered: through, deliveredCursor: cursorAt(through) };
  return { record: advanced, after: record.delivered, through };
}

/** An acknowledgement: monotonic and idempotent (an older or repeated one changes nothing); never past what was delivered. */
export function acknowledged(record: ConsumerRecord, sequence: bigint, cursor: string): ConsumerRecord {
  if (sequence > record.delivered) {
    throw new CodedError('cursor_invalid', `the cursor names change ${sequence}, beyond the highest change delivered to this consumer (${record.delivered})`, {
      deliveredSequence: record.delivered.toString(),
    });
  }
  return sequence <= record.acknowledged ? record : { ...record, acknowledged: sequence, acknowledgedCursor: cursor };
}

/** The record to write with its lease extended, or null when nothing changed and the lease has plenty left. */
export function toSave(record: ConsumerRecord, nowMs: number, changed: boolean): ConsumerRecord | null {
  const ttlMs = record.leaseTtlSeconds * 1000;
  if (!changed && record.leaseExpiresAt - nowMs > ttlMs * LEASE_REFRESH_FRACTION) return null;
  return { ...record, leaseExpiresAt: nowMs + ttlMs };
}

/**
 * The last sequence of the next batch after `delivered`: up to `limit` changes, never beyond what the log holds. The
 * log is dense — sequences grow by one per change and only its tail is pruned, and `session` already refused a
 * position whose next change was pruned — so no key needs visiting; the reader of the batch fails the call if a
 * change of (delivered, end] is missing.
 */
function batchEnd(deliveredThrough: bigint, limit: number, bounds: LogBounds): bigint {
  if (bounds.tail === null || bounds.logged <= deliveredThrough) return deliveredThrough;
  const end = deliveredThrough + BigInt(limit);
  return end < bounds.logged ? end : bounds.logged;
}

function startSequence(creation: ConsumerCreation, bounds: LogBounds): bigint {
  switch (creation.start.position) {
    case 'earliest_retained':
      return bounds.tail === null ? bounds.head : bounds.tail - 1n;
    case 'current_head':
      return bounds.head;
    case 'cursor': {
      const sequence = BigInt(creation.start.sequence ?? '-1');
      if (sequence < 0n) throw new CodedError('invalid_request', "start.position 'cursor' needs start.cursor");
      if (sequence > bounds.head) {
        throw new CodedError('reset_required', `the start cursor names change ${sequence}, beyond this log's head ${bounds.head}: it was not written by this store`, {
          reason: 'beyond_head', head: bounds.head.toString(),
        });
      }
      if (!resumable(sequence, bounds)) {
        throw new CodedError('reset_required', `the changes after the start cursor (change ${sequence}) are no longer retained; take a snapshot and start from its boundary cursor`, {
          reason: 'expired', retainedFrom: bounds.tail?.toString() ?? null, action: 'snapshot and resubscribe',
        });
      }
      return sequence;
    }
  }
}

export function expired(record: ConsumerRecord, bounds: LogBounds): CodedError {
  return new CodedError('cursor_expired', `the changes after consumer '${record.id}''s position are no longer retained (its lease lapsed or it is best-effort); take a snapshot, delete the consumer and recreate it`, {
    consumer: record.id,
    acknowledgedSequence: record.acknowledged.toString(),
    retainedFrom: bounds.tail?.toString() ?? null,
    action: 'snapshot and resubscribe',
  });
}
