/**
 * The outbox's writes to consumer records, each in one LMDB write transaction that also reads the
 * change-log bounds, so a watermark is always checked against the log as it is at commit. What each
 * call does to a record (the lease rules) is store/consumer-transitions.ts, shared with the relays.
 */
import { TransactionFlags } from 'lmdb';
import { CodedError } from '../../runtime/errors.js';
import { readChange } from '../../store/change-log.js';
import { consumerKey, logBounds, readConsumer, type ConsumerRecord } from '../../store/consumers.js';
import { acknowledged, delivered, leased, newConsumerRecord, session as sessionOf, toSave } from '../../store/consumer-transitions.js';
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
    const record = newConsumerRecord(message, logBounds(tables), (sequence) => cursorAt(out, tables, message.instance, sequence), nowMs);
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
    const { record } = session(out, message.instance, message.id, nowMs);
    return save(out, leased(record, message.redeliver, nowMs), nowMs, true);
  }, COMMIT_WITHOUT_FLUSH);
}

export function deliverChanges(out: OutboxStore, message: DeliverChanges, nowMs: number): Delivery {
  return out.store.env.transactionSync(() => {
    const { record, tables, bounds } = session(out, message.instance, message.id, nowMs);
    const batch = delivered(record, bounds, message.limit, (sequence) => cursorAt(out, tables, record.instance, sequence));
    const saved = save(out, batch.record, nowMs, batch.record !== record);
    return { record: saved, after: batch.after.toString(), through: batch.through.toString() };
  }, COMMIT_WITHOUT_FLUSH);
}

export function acknowledge(out: OutboxStore, message: AcknowledgeChanges, nowMs: number): ConsumerRecord {
  return out.store.env.transactionSync(() => {
    const { record } = session(out, message.instance, message.id, nowMs);
    const next = acknowledged(record, BigInt(message.sequence), message.cursor);
    return save(out, next, nowMs, next !== record);
  });
}

/** The record, its instance's tables and log bounds, in the session the call works in. */
function session(out: OutboxStore, instance: string, id: string, nowMs: number) {
  const found = readConsumer(out.store.consumers, instance, id);
  if (!found) throw new CodedError('not_found', `no consumer '${id}' on this processor`, { consumer: id });
  const tables = out.store.processor(instance);
  const bounds = logBounds(tables);
  return { record: sessionOf(found, bounds, nowMs), tables, bounds };
}

/** Writes the record with its lease extended, unless nothing changed and the lease has plenty left. */
function save(out: OutboxStore, record: ConsumerRecord, nowMs: number, changed: boolean): ConsumerRecord {
  const renewed = toSave(record, nowMs, changed);
  if (!renewed) return record;
  out.store.consumers.put(consumerKey(record.instance, record.id), renewed);
  return renewed;
}

/** The cursor of the change at `sequence` as stored in the log, or a block-less cursor when that change is not retained (or is 0). */
export function cursorAt(out: OutboxStore, tables: ProcessorTables, instance: string, sequence: bigint): string {
  const change = readChange({ changes: tables.changes, epoch: out.store.epoch, chainId: out.chainId, instance }, sequence);
  if (change) return change.cursor;
  return encodeCursor({ epoch: out.store.epoch, chainId: out.chainId, instance, sequence });
}
