/**
 * Gives a copied store a new store epoch (ARCHITECTURE §4: "a store restored into a new path gets a
 * new epoch"), so a cursor handed out by the original answers `reset_required` on the copy, while
 * the copy's own feed keeps working: every cursor the store keeps is re-minted with the new epoch in
 * the same write transaction —
 *
 * - each retained change of every processor instance: the cursor in front of the envelope and the
 *   same token inside the envelope JSON (its `cursor` field; the token has the same length under
 *   any epoch, so the value keeps its size);
 * - each consumer's delivered and acknowledged cursor (their sequences do not change).
 *
 * The old epoch joins meta `ancestorEpochs`, so the copy's JetStream publisher continues the original's subjects
 * after an `epoch_changed` marker instead of refusing them as another store's.
 *
 * Query-and-follow snapshots are dropped: their boundary cursors and page tokens name the old
 * epoch, and a snapshot is a short-lived read (its id then answers as expired). Everything else is
 * keyed by block number, hash or sequence and carries no epoch.
 */
import { randomBytes } from 'node:crypto';
import type { Database } from 'lmdb';
import { decodeChangeValue, encodeChangeValue, isChangeGroup, remintGroup, storedChangeCount } from './change-log.js';
import type { ConsumerRecord } from './consumers.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { listTableNames, openTable, type RootEnvironment } from './store.js';
import { decodeU64Key, readU64 } from './keys.js';
import { epochToHex, readAncestorEpochs, readRawMeta, validateMeta, STORE_EPOCH_BYTES, type MetaTable } from './meta.js';
import { instanceLogs } from './stream-tables.js';
import { META_TABLE, SHARED_TABLES, tableSpecByName } from './tables.js';

/** Changes rewritten per write transaction. */
const ROTATION_BATCH = 4096;
/** A batch also ends past this many bytes of values: a group holds a whole block's envelopes (hundreds of KB for erc20). */
const ROTATION_BATCH_BYTES = 64 * 1024 * 1024;

export interface EpochRotation {
  readonly previousEpoch: string;
  readonly storeEpoch: string;
  /** Stored changes whose cursors were re-minted (each change of a group counts). */
  readonly changes: number;
  readonly consumers: number;
  /** Query-and-follow snapshots dropped (with their rows). */
  readonly snapshots: number;
}

function table<V, K extends string | Buffer>(env: RootEnvironment, name: string): Database<V, K> {
  const spec = tableSpecByName(name);
  const db = spec ? openTable<V, K>(env, spec) : undefined;
  if (!db) throw new Error(`table ${name} is missing`);
  return db;
}

function newEpoch(old: bigint): Buffer {
  for (;;) {
    const bytes = randomBytes(STORE_EPOCH_BYTES);
    const value = readU64(bytes);
    if (value !== 0n && value !== old) return bytes;
  }
}

/** Re-mints one cursor of `instance` under the new epoch; throws when it is not a cursor of the old store. */
function remint(token: string, from: { epoch: bigint; chainId: number; instance: string }, epoch: bigint): string {
  const decoded = decodeCursor(token, from);
  return encodeCursor({ epoch, chainId: from.chainId, instance: from.instance, sequence: decoded.sequence, ...(decoded.block ? { block: decoded.block } : {}) });
}

/** Runs on a store no node has open (a fresh copy), in one write transaction. */
export function rotateStoreEpoch(env: RootEnvironment, path: string): EpochRotation {
  const meta = openTable<unknown, string>(env, META_TABLE) as MetaTable | undefined;
  if (!meta) throw new Error(`store at ${path} has no meta table`);
  const identity = validateMeta(readRawMeta(meta), path);
  const epochBytes = newEpoch(identity.epoch);
  const epoch = readU64(epochBytes);
  const chainId = identity.chainId ?? 0;
  const logs = instanceLogs(listTableNames(env), (name) => table<unknown, Buffer | string>(env, name));
  const consumers = table<ConsumerRecord, string>(env, SHARED_TABLES.consumers.name);
  const snapshots = table<unknown, string>(env, SHARED_TABLES.snapshots.name);
  const snapshotRows = table<Buffer, Buffer>(env, SHARED_TABLES.snapshotRows.name);
  // Change logs are rewritten in batches of transactions, so LMDB reuses the pages each batch frees
  // instead of growing the file by a whole second copy of the logs; the new epoch is written last,
  // in the final transaction, so an interrupted rotation leaves a store `db verify` refuses.
  let changes = 0;
  for (const { instance, changes: log } of logs) {
    if (!log) continue;
    const from = { epoch: identity.epoch, chainId, instance };
    let start: Buffer | undefined;
    for (;;) {
      const batch: Array<{ key: Buffer; value: Buffer }> = [];
      let bytes = 0;
      for (const { key, value } of log.getRange(start ? { start } : {})) {
        if (start && start.equals(key)) continue;
        batch.push({ key: Buffer.from(key), value: Buffer.from(value) });
        bytes += value.length;
        if (batch.length >= ROTATION_BATCH || bytes >= ROTATION_BATCH_BYTES) break;
      }
      if (batch.length === 0) break;
      env.transactionSync(() => {
        for (const { key, value } of batch) {
          if (isChangeGroup(value)) {
            log.putSync(key, remintGroup(decodeU64Key(key), value, (cursor) => remint(cursor, from, epoch)));
            changes += storedChangeCount(value);
            continue;
          }
          const stored = decodeChangeValue(decodeU64Key(key), value);
          const cursor = remint(stored.cursor, from, epoch);
          const json = Buffer.from(stored.json);
          const at = json.indexOf(`"${stored.cursor}"`, 0, 'latin1');
          if (at < 0) throw new Error(`change ${stored.sequence} of ${instance}: its envelope does not carry its cursor`);
          json.write(cursor, at + 1, 'latin1');
          log.putSync(key, encodeChangeValue(stored.operation, cursor, json));
          changes += 1;
        }
      });
      start = batch[batch.length - 1]!.key;
    }
  }
  return env.transactionSync(() => {
    let consumerCount = 0;
    for (const { key, value } of consumers.getRange({})) {
      const from = { epoch: identity.epoch, chainId, instance: value.instance };
      consumers.putSync(key, { ...value, deliveredCursor: remint(value.deliveredCursor, from, epoch), acknowledgedCursor: remint(value.acknowledgedCursor, from, epoch) });
      consumerCount += 1;
    }
    let snapshotCount = 0;
    for (const key of snapshots.getKeys({})) {
      snapshots.removeSync(key);
      snapshotCount += 1;
    }
    for (const key of snapshotRows.getKeys({})) snapshotRows.removeSync(key);
    meta.putSync('ancestorEpochs', [...readAncestorEpochs(meta), epochToHex(identity.epoch)]);
    meta.putSync('storeEpoch', epochBytes);
    return { previousEpoch: epochToHex(identity.epoch), storeEpoch: epochToHex(epoch), changes, consumers: consumerCount, snapshots: snapshotCount };
  });
}
