/**
 * The outbox's writes to consumer records, each in one LMDB write transaction that also reads the
 * change-log bounds, so a watermark is always checked against the log as it is at commit.
 *
 * Lease rules: every consumer-scoped call (lease, deliver, acknowledge) extends the lease by
 * `leaseTtlSeconds`. A call that finds the lease expired starts a new session: the delivered
 * watermark goes back to the acknowledged one (what was handed out before may never have arrived),
 * unless the changes after the acknowledged position were pruned meanwhile — then 410
 * `cursor_expired`: the consumer must take a snapshot and be recreated.
 */
import { TransactionFlags } from 'lmdb';
import { CodedError } from '../../runtime/errors.js';
import { readChange } from '../../store/change-log.js';
import {
  consumerKey, leaseActive, logBounds, readConsumer, resumable, type ConsumerRecord, type LogBounds,
} from '../../store/consumers.js';
import { encodeCursor } from '../../store/cursor.js';
import { subscriptionBinding } from '../../store/backfill-subscriptions.js';
import type { ProcessorTables, Store } from '../../store/store.js';
import { u64Key } from '../../store/keys.js';
import type { AcknowledgeChanges, CreateConsumer, DeleteConsumer, DeliverChanges, Delivery, RenewLease } from './messages.js';

export interface OutboxStore {
  readonly store: Store;
  readonly chainId: number;
}

/**
 * Durability of the answers. Every write here commits before the answer, so what a client was told
 * survives kill -9. Acknowledgements (and creation, deletion) use lmdb-js's default commit: the data
 * pages are flushed (fdatasync) and the meta page written synchronously before `transactionSync`
 * returns, so an acknowledged position also survives a power failure on a disk that honours
 * flushes. This is deliberate: the acknowledged watermark is the product — pruning trusts it, and a
 * consumer must never be handed again what it said it committed. It costs one flush per batch
 * (0.1–0.3 ms on the bench machine, i.e. ~0.2 µs per change at batches of 1,000).
 *
 * Delivery and lease writes pass NO_SYNC_FLUSH. With lmdb-js's overlapping sync (its default on
 * Linux) that makes the commit visible and releases the write lock before the flush — which this
 * same call still performs before it returns (strace: one fdatasync per commit either way) — so the
 * processor's next commit need not wait behind it. They would not need the flush at all: a lost
 * delivery only moves a consumer back towards its acknowledged position, redelivered anyway.
 */
const COMMIT_WITHOUT_FLUSH = TransactionFlags.ABORTABLE | TransactionFlags.SYNCHRONOUS_COMMIT | TransactionFlags.NO_SYNC_FLUSH;

/** Extending a lease that still has more than this fraction of its TTL left is skipped when nothing else changes. */
const LEASE_REFRESH_FRACTION = 0.5;

export function createConsumer(out: OutboxStore, message: CreateConsumer, nowMs: number): ConsumerRecord {
  const { store } = out;
  return store.env.transactionSync(() => {
    if (readConsumer(store.consumers, message.instance, message.id)) {
      throw new CodedError('conflict', `consumer '${message.id}' already exists on this processor; delete it first to recreate it`, { consumer: message.id });
    }
    if (subscriptionBinding(store, message.instance, message.id)) {
      throw new CodedError('conflict', `consumer '${message.id}' already exists on this processor (a backfill subscription's)`, { consumer: message.id });
    }
    const tables = store.processor(message.instance);
    const bounds = logBounds(tables);
    const sequence = startSequence(message, bounds);
    const cursor = message.start.position === 'cursor' ? message.start.cursor! : cursorAt(out, tables, message.instance, sequence);
    const record: ConsumerRecord = {
      version: 1,
      processor: message.processor,
      instance: message.instance,
      id: message.id,
      role: message.role,
      leaseTtlSeconds: message.leaseTtlSeconds,
      leaseExpiresAt: nowMs + message.leaseTtlSeconds * 1000,
      createdAt: new Date(nowMs).toISOString(),
      credential: message.credential,
      start: { position: message.start.position, sequence },
      delivered: sequence,
      deliveredCursor: cursor,
      acknowledged: sequence,
      acknowledgedCursor: cursor,
    };
    store.consumers.put(consumerKey(message.instance, message.id), record);
    return record;
  });
}

export function deleteConsumer(out: OutboxStore, message: DeleteConsumer): boolean {
  return out.store.env.transactionSync(() => {
    const key = consumerKey(message.instance, message.id);
    if (out.store.consumers.get(key) === undefined) return false;
    out.store.consumers.remove(key);
    return true;
  });
}

export function renewLease(out: OutboxStore, message: RenewLease, nowMs: number): ConsumerRecord {
  return out.store.env.transactionSync(() => {
    const { record, tables } = session(out, message.instance, message.id, nowMs);
    const rewound = message.redeliver ? rewind(record) : record;
    return save(out, { ...rewound, leaseExpiresAt: nowMs + record.leaseTtlSeconds * 1000 }, tables, nowMs, true);
  }, COMMIT_WITHOUT_FLUSH);
}

export function deliverChanges(out: OutboxStore, message: DeliverChanges, nowMs: number): Delivery {
  return out.store.env.transactionSync(() => {
    const { record, tables, bounds } = session(out, message.instance, message.id, nowMs);
    if (!resumable(record.delivered, bounds)) throw expired(record, bounds);
    const through = batchEnd(record.delivered, message.limit, bounds);
    const advanced = through === record.delivered ? record : { ...record, delivered: through, deliveredCursor: cursorAt(out, tables, record.instance, through) };
    const saved = save(out, advanced, tables, nowMs, advanced !== record);
    return { record: saved, after: record.delivered.toString(), through: through.toString() };
  }, COMMIT_WITHOUT_FLUSH);
}

export function acknowledge(out: OutboxStore, message: AcknowledgeChanges, nowMs: number): ConsumerRecord {
  return out.store.env.transactionSync(() => {
    const { record, tables } = session(out, message.instance, message.id, nowMs);
    const sequence = BigInt(message.sequence);
    if (sequence > record.delivered) {
      throw new CodedError('cursor_invalid', `the cursor names change ${sequence}, beyond the highest change delivered to this consumer (${record.delivered})`, {
        deliveredSequence: record.delivered.toString(),
      });
    }
    // Monotonic and idempotent: an older or repeated acknowledgement changes nothing.
    if (sequence <= record.acknowledged) return save(out, record, tables, nowMs, false);
    return save(out, { ...record, acknowledged: sequence, acknowledgedCursor: message.cursor }, tables, nowMs, true);
  });
}

/**
 * The last sequence of the next batch after `delivered`: up to `limit` changes, never beyond what the
 * log holds. The log is dense — sequences grow by one per change and only its tail is pruned, and
 * `session` already refused a position whose next change was pruned — so no key needs visiting;
 * the listener reads every change of (delivered, end] and fails the call if one is missing.
 */
function batchEnd(delivered: bigint, limit: number, bounds: LogBounds): bigint {
  if (bounds.tail === null || bounds.logged <= delivered) return delivered;
  const end = delivered + BigInt(limit);
  return end < bounds.logged ? end : bounds.logged;
}

/** The record, its instance's tables and log bounds; a lapsed lease starts a new session (see the file comment). */
function session(out: OutboxStore, instance: string, id: string, nowMs: number): { record: ConsumerRecord; tables: ProcessorTables; bounds: LogBounds } {
  const found = readConsumer(out.store.consumers, instance, id);
  if (!found) throw new CodedError('not_found', `no consumer '${id}' on this processor`, { consumer: id });
  const tables = out.store.processor(instance);
  const bounds = logBounds(tables);
  if (leaseActive(found, nowMs)) return { record: found, tables, bounds };
  if (!resumable(found.acknowledged, bounds)) throw expired(found, bounds);
  return { record: rewind(found), tables, bounds };
}

function rewind(record: ConsumerRecord): ConsumerRecord {
  return record.delivered === record.acknowledged ? record : { ...record, delivered: record.acknowledged, deliveredCursor: record.acknowledgedCursor };
}

/** Writes the record with its lease extended, unless nothing changed and the lease has plenty left. */
function save(out: OutboxStore, record: ConsumerRecord, _tables: ProcessorTables, nowMs: number, changed: boolean): ConsumerRecord {
  const ttlMs = record.leaseTtlSeconds * 1000;
  if (!changed && record.leaseExpiresAt - nowMs > ttlMs * LEASE_REFRESH_FRACTION) return record;
  const renewed = { ...record, leaseExpiresAt: nowMs + ttlMs };
  out.store.consumers.put(consumerKey(record.instance, record.id), renewed);
  return renewed;
}

function startSequence(message: CreateConsumer, bounds: LogBounds): bigint {
  switch (message.start.position) {
    case 'earliest_retained':
      return bounds.tail === null ? bounds.head : bounds.tail - 1n;
    case 'current_head':
      return bounds.head;
    case 'cursor': {
      const sequence = BigInt(message.start.sequence ?? '-1');
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

/** The cursor of the change at `sequence` as stored in the log, or a block-less cursor when that change is not retained (or is 0). */
export function cursorAt(out: OutboxStore, tables: ProcessorTables, instance: string, sequence: bigint): string {
  const change = readChange({ changes: tables.changes, epoch: out.store.epoch, chainId: out.chainId, instance }, sequence);
  if (change) return change.cursor;
  return encodeCursor({ epoch: out.store.epoch, chainId: out.chainId, instance, sequence });
}

function expired(record: ConsumerRecord, bounds: LogBounds): CodedError {
  return new CodedError('cursor_expired', `the changes after consumer '${record.id}''s position are no longer retained (its lease lapsed or it is best-effort); take a snapshot, delete the consumer and recreate it`, {
    consumer: record.id,
    acknowledgedSequence: record.acknowledged.toString(),
    retainedFrom: bounds.tail?.toString() ?? null,
    action: 'snapshot and resubscribe',
  });
}
