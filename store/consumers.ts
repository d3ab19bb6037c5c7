/**
 * Durable consumers (spec §2.5): one msgpack record per consumer in the shared `consumers` table,
 * keyed `<processor instance>/<consumer id>`. The `outbox` lane is the only writer; listeners read
 * records straight from LMDB.
 *
 * A record holds the consumer's role, its lease, its salted credential hash (never the secret) and
 * two watermarks as change sequences of the instance's change log, each with the cursor that names
 * it: `delivered` (the last change handed out by `…/changes`) and `acknowledged` (the last change
 * the application said it committed). Invariant: acknowledged ≤ delivered.
 *
 * Roles: `required` holds back change-log pruning while its lease is active; `best_effort` never
 * does, so it may find the changes after its position pruned (410 `cursor_expired`) and must then
 * take a snapshot and be recreated.
 */
import { changeHead, changeTail } from './change-log.js';
import { readProgress } from './coverage.js';
import type { ProcessorTables, StringKeyedRecordTable } from './store.js';

export const CONSUMER_ROLES = ['required', 'best_effort'] as const;
export type ConsumerRole = (typeof CONSUMER_ROLES)[number];
export const START_POSITIONS = ['earliest_retained', 'current_head', 'cursor'] as const;
export type StartPosition = (typeof START_POSITIONS)[number];

/** URL-safe, without `/` (the key separator). */
export const CONSUMER_ID = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$/;

export interface CredentialHash {
  readonly algorithm: 'scrypt';
  readonly cost: number;
  readonly blockSize: number;
  readonly parallelization: number;
  readonly salt: Uint8Array;
  readonly hash: Uint8Array;
}

export interface ConsumerRecord {
  readonly version: 1;
  /** The processor id the consumer was created under (URL name) and the instance its cursors name. */
  readonly processor: string;
  readonly instance: string;
  readonly id: string;
  readonly role: ConsumerRole;
  readonly leaseTtlSeconds: number;
  /** Milliseconds since the Unix epoch. */
  readonly leaseExpiresAt: number;
  readonly createdAt: string;
  readonly credential: CredentialHash;
  readonly start: { readonly position: StartPosition; readonly sequence: bigint };
  readonly delivered: bigint;
  readonly deliveredCursor: string;
  readonly acknowledged: bigint;
  readonly acknowledgedCursor: string;
  /**
   * Set when a rebuild's promote or rollback moved the consumer to `instance` (actors/outbox/consumer-move.ts): the
   * position it resumed after there, and the block it had acknowledged through before — what it has acknowledged
   * until it acknowledges past that position.
   */
  readonly moved?: { readonly resumeAfter: bigint; readonly throughBlock: number | null };
}

export function consumerKey(instance: string, id: string): string {
  return `${instance}/${id}`;
}

export function readConsumer(table: StringKeyedRecordTable, instance: string, id: string): ConsumerRecord | undefined {
  return table.get(consumerKey(instance, id)) as ConsumerRecord | undefined;
}

/** Every consumer of one processor instance, in id order. */
export function listConsumers(table: StringKeyedRecordTable, instance: string): ConsumerRecord[] {
  const records: ConsumerRecord[] = [];
  // '0' is the character after '/', so this range holds exactly the keys `<instance>/…`.
  for (const { value } of table.getRange({ start: `${instance}/`, end: `${instance}0` })) records.push(value as ConsumerRecord);
  return records;
}

export function leaseActive(record: ConsumerRecord, nowMs: number): boolean {
  return record.leaseExpiresAt > nowMs;
}

export interface LogBounds {
  /** The highest sequence ever written (0 before the first change). */
  readonly head: bigint;
  /** The highest sequence the log holds now (0 when it is empty). */
  readonly logged: bigint;
  /** The lowest retained sequence, or null when nothing is retained. */
  readonly tail: bigint | null;
}

export function logBounds(tables: ProcessorTables): LogBounds {
  const logged = changeHead(tables.changes);
  const progressed = BigInt(readProgress(tables.state).changeSequence);
  return { head: logged > progressed ? logged : progressed, logged, tail: changeTail(tables.changes) };
}

/** Whether the changes after `sequence` are all still in the log (a reader positioned there can go on). */
export function resumable(sequence: bigint, bounds: LogBounds): boolean {
  return bounds.tail === null ? sequence >= bounds.head : sequence + 1n >= bounds.tail;
}

/**
 * The lowest sequence pruning must keep for this instance: one past the acknowledged watermark of
 * every `required` consumer whose lease is active (null when no such consumer holds anything back).
 */
export function pruneFloor(table: StringKeyedRecordTable, instance: string, nowMs: number): bigint | null {
  let floor: bigint | null = null;
  for (const record of listConsumers(table, instance)) {
    if (record.role !== 'required' || !leaseActive(record, nowMs)) continue;
    const keep = record.acknowledged + 1n;
    if (floor === null || keep < floor) floor = keep;
  }
  return floor;
}
