/**
 * Backfill subscriptions (spec §3.3, §4.6): records in the shared `jobs` table, written by the history lane, and
 * each subscription's independent history stream.
 *
 * Keys in `jobs` (beside the materialization jobs' `job:`/`job-key:` keys, store/history-jobs.ts):
 *   `bsub:<id>`                              → the subscription record (small, fixed in size whatever its range)
 *   `bsub-key:<idempotencyKey>`              → the id of the subscription created with that key
 *   `bsub-consumer:<instance>/<consumer id>` → {subscription, stream}: binds a consumer id of a processor instance to
 *                                              the stream its records and cursors live in (api/aggregate/consumers)
 *   `bsub-gap:<id>:<from, 16 digits>`        → `to`: one run of blocks the subscription owns (fill_missing: the
 *                                              range's gaps at creation; recompute: the whole range, one run)
 *
 * The stream is a change log of its own: the tables of the pseudo-instance `bs~<id without its bs- prefix>`, kept as
 * keyed views over the shared stream tables (`s.changes`, `s.state`, … — store/stream-tables.ts: as many streams as
 * the disk holds, none taking a named table), so its sequences start at 1, its cursors name the stream and
 * are refused by the processor's own log (and the other way round), `db verify`, epoch rotation and the outbox treat
 * it as any change log. The subscription's consumer is an ordinary consumer record of the stream instance (keyed
 * `<stream>/<consumer id>`, credential hashed at rest). The stream's progress record (store/coverage.ts) carries
 * the stream head (`changeSequence`) and the last block published (`reduceCursor`), written by the processor lane in
 * the same transaction as the stream's changes: a restart resumes after that block and never publishes one twice.
 */
import { readProgress, writeProgress, INITIAL_PROGRESS } from './coverage.js';
import { consumerKey, readConsumer, type ConsumerRecord } from './consumers.js';
import type { ProcessorTables, Store } from './store.js';
import type { HistoryWork } from './history-jobs.js';
import { dropInstanceTables } from './drop-instance.js';

export type SubscriptionMode = 'fill_missing' | 'recompute';

export interface BackfillSubscription extends HistoryWork {
  /** The stream's pseudo-instance (its change log and its consumer's records). */
  readonly stream: string;
  readonly consumer: string;
  readonly mode: SubscriptionMode;
}

export interface SubscriptionBinding {
  readonly subscription: string;
  readonly stream: string;
}

export interface OwnedRun {
  readonly from: number;
  readonly to: number;
}

const recordKey = (id: string) => `bsub:${id}`;
const idempotencyKey = (key: string) => `bsub-key:${key}`;
const bindingKey = (instance: string, consumer: string) => `bsub-consumer:${consumerKey(instance, consumer)}`;
const gapPrefix = (id: string) => `bsub-gap:${id}:`;
const gapKey = (id: string, from: number) => `${gapPrefix(id)}${String(from).padStart(16, '0')}`;

export const SUBSCRIPTION_ID = /^bs-[0-9a-f]{12}-[0-9a-f]{8}$/;

import { isStreamInstance, migrateStreamTables } from './stream-tables.js';
import { parseProcessorTableName, PROCESSOR_TABLE_KINDS } from './tables.js';

export { isStreamInstance, streamInstance } from './stream-tables.js';

export function readSubscription(store: Pick<Store, 'jobs'>, id: string): BackfillSubscription | undefined {
  return store.jobs.get(recordKey(id)) as BackfillSubscription | undefined;
}

export function subscriptionIdForKey(store: Pick<Store, 'jobs'>, key: string): string | undefined {
  return store.jobs.get(idempotencyKey(key)) as string | undefined;
}

/** The stream a consumer id of a processor instance is bound to, when it is a subscription's consumer. */
export function subscriptionBinding(store: Pick<Store, 'jobs'>, instance: string, consumer: string): SubscriptionBinding | undefined {
  return store.jobs.get(bindingKey(instance, consumer)) as SubscriptionBinding | undefined;
}

/** Every binding of one processor instance, in consumer-id order. */
export function listBindings(store: Pick<Store, 'jobs'>, instance: string): Array<SubscriptionBinding & { consumer: string }> {
  const prefix = `bsub-consumer:${instance}/`;
  const bindings: Array<SubscriptionBinding & { consumer: string }> = [];
  // '0' follows '/': the range holds exactly the keys `…<instance>/…`.
  for (const { key, value } of store.jobs.getRange({ start: prefix, end: `bsub-consumer:${instance}0` })) {
    bindings.push({ ...(value as SubscriptionBinding), consumer: String(key).slice(prefix.length) });
  }
  return bindings;
}

/** Every subscription, oldest first (ids sort by creation time). */
export function listSubscriptions(store: Pick<Store, 'jobs'>): BackfillSubscription[] {
  const records: BackfillSubscription[] = [];
  for (const { value } of store.jobs.getRange({ start: 'bsub:', end: 'bsub;' })) records.push(value as BackfillSubscription);
  return records;
}

/** The owned runs starting after `after` (or the run holding `after + 1`), ascending, at most `limit` runs. */
export function ownedRunsAfter(store: Pick<Store, 'jobs'>, id: string, after: number, limit: number): OwnedRun[] {
  const runs: OwnedRun[] = [];
  // The run holding after+1 may start below it: look at the run before the start key too.
  const previous = [...store.jobs.getRange({ start: gapKey(id, after + 1), end: gapPrefix(id), reverse: true, limit: 1 })];
  for (const { key, value } of previous) {
    const from = Number(String(key).slice(gapPrefix(id).length));
    const to = value as number;
    if (to > after && from <= after) runs.push({ from: after + 1, to });
  }
  for (const { key, value } of store.jobs.getRange({ start: gapKey(id, after + 1), end: `${gapPrefix(id)};`, limit: Math.max(0, limit - runs.length) })) {
    runs.push({ from: Number(String(key).slice(gapPrefix(id).length)), to: value as number });
  }
  return runs;
}

/** How many owned blocks lie at or below `through`. */
export function ownedCountThrough(store: Pick<Store, 'jobs'>, id: string, through: number | null): number {
  if (through === null) return 0;
  let count = 0;
  for (const { key, value } of store.jobs.getRange({ start: gapPrefix(id), end: `${gapPrefix(id)};` })) {
    const from = Number(String(key).slice(gapPrefix(id).length));
    if (from > through) break;
    count += Math.min(value as number, through) - from + 1;
  }
  return count;
}

/** The stream's last published block (null before the first) and its head sequence. */
export function streamProgress(store: Store, stream: string): { publishedThrough: number | null; head: bigint } {
  const progress = readProgress(store.processor(stream).state);
  return { publishedThrough: progress.reduceCursor?.number ?? null, head: progress.changeSequence };
}

export class SubscriptionConflict extends Error {
  override readonly name = 'SubscriptionConflict';
}

/**
 * Creates, in one write transaction, the subscription record, its idempotency key, its owned runs, the consumer
 * record (of the stream instance, starting before the stream's first change) and the consumer binding, and the
 * stream's initial progress. The stream's tables must already be open (`store.processor(stream)`): LMDB opens named
 * tables outside write transactions. Throws SubscriptionConflict when the consumer id is taken on the processor.
 */
export async function createSubscription(store: Store, record: BackfillSubscription, runs: readonly OwnedRun[], consumer: ConsumerRecord): Promise<void> {
  const streamTables = store.processor(record.stream);
  try {
    await writeSubscription(store, record, runs, consumer, streamTables);
  } catch (error) {
    // Nothing names the new stream: its tables, opened above, go again.
    await store.write(() => dropInstanceTables(store, record.stream));
    store.forgetProcessor(record.stream);
    throw error;
  }
}

function writeSubscription(store: Store, record: BackfillSubscription, runs: readonly OwnedRun[], consumer: ConsumerRecord, streamTables: ProcessorTables): Promise<void> {
  return store.write(() => {
    if (readConsumer(store.consumers, record.instance, record.consumer) || store.jobs.get(bindingKey(record.instance, record.consumer)) !== undefined) {
      throw new SubscriptionConflict(`consumer '${record.consumer}' already exists on processor '${record.processor}'`);
    }
    if (store.jobs.get(idempotencyKey(record.idempotencyKey)) !== undefined) {
      throw new SubscriptionConflict(`idempotency key '${record.idempotencyKey.slice(0, 80)}' was taken meanwhile`);
    }
    store.jobs.put(recordKey(record.id), record);
    store.jobs.put(idempotencyKey(record.idempotencyKey), record.id);
    for (const run of runs) store.jobs.put(gapKey(record.id, run.from), run.to);
    const binding: SubscriptionBinding = { subscription: record.id, stream: record.stream };
    store.jobs.put(bindingKey(record.instance, record.consumer), binding);
    store.consumers.put(consumerKey(record.stream, consumer.id), consumer);
    writeProgress(streamTables.state, { ...INITIAL_PROGRESS, configuredStartBlock: record.fromBlock });
  });
}

/** Reads the record and writes `change(record)` in one write transaction. */
export function updateSubscription(store: Store, id: string, change: (record: BackfillSubscription) => BackfillSubscription): Promise<BackfillSubscription | undefined> {
  return store.write(() => {
    const record = readSubscription(store, id);
    if (!record) return undefined;
    const next = change(record);
    store.jobs.put(recordKey(id), next);
    return next;
  });
}

/**
 * Deletes a (terminal) subscription with everything it created, in one write transaction: the record, its key, its
 * owned runs, the consumer binding and record, and the stream's keys in the shared stream tables (or, for a stream an
 * earlier version kept in tables of its own, those tables: store/drop-instance.ts). Returns the dropped table names
 * (none for a stream in the shared tables).
 */
export async function deleteSubscription(store: Store, record: BackfillSubscription): Promise<string[]> {
  store.processor(record.stream);
  const dropped = await store.write(() => {
    store.jobs.remove(recordKey(record.id));
    if (subscriptionIdForKey(store, record.idempotencyKey) === record.id) store.jobs.remove(idempotencyKey(record.idempotencyKey));
    for (const key of [...store.jobs.getKeys({ start: gapPrefix(record.id), end: `${gapPrefix(record.id)};` })]) store.jobs.remove(key);
    const binding = subscriptionBinding(store, record.instance, record.consumer);
    if (binding?.subscription === record.id) store.jobs.remove(bindingKey(record.instance, record.consumer));
    store.consumers.remove(consumerKey(record.stream, record.consumer));
    return dropInstanceTables(store, record.stream).tables;
  });
  store.forgetProcessor(record.stream);
  return dropped;
}

/**
 * Drops the tables of streams no subscription names (left by a store that emptied a deleted subscription's stream
 * instead of dropping it, or by a crash between a table's creation and its subscription's). Run by the history lane
 * at its start, before any subscription is created. Returns the streams dropped.
 */
export async function dropOrphanStreams(store: Store): Promise<string[]> {
  const named = new Set(listSubscriptions(store).map((record) => record.stream));
  const orphans = store.processorInstances().filter((instance) => isStreamInstance(instance) && !named.has(instance));
  if (orphans.length === 0) return [];
  for (const stream of orphans) store.processor(stream);
  await store.write(() => {
    for (const stream of orphans) dropInstanceTables(store, stream);
  });
  for (const stream of orphans) store.forgetProcessor(stream);
  return orphans;
}

/**
 * Creates the shared stream tables (store/stream-tables.ts) and moves the streams an earlier version kept in tables of
 * their own into them, dropping their own: run at every start, before any lane reads a stream. Returns the streams moved.
 */
export async function migrateOwnStreamTables(store: Store): Promise<string[]> {
  // The shared tables exist from the first start on, so streams coming and going never change the store's table count.
  for (const kind of PROCESSOR_TABLE_KINDS) store.streamTable(kind);
  const streams = store.tableNames().map(parseProcessorTableName).filter((table) => table?.kind === 'changes' && isStreamInstance(table.instance)).map((table) => table!.instance);
  const moved = await migrateStreamTables({
    streams,
    open: (kind) => store.streamTable(kind),
    // Still the stream's own tables: they exist until the drop below commits.
    ownTables: (stream) => store.processor(stream),
    drop: (stream) => dropInstanceTables(store, stream),
    write: (action) => store.write(action),
  });
  for (const stream of moved) store.forgetProcessor(stream);
  return moved;
}
