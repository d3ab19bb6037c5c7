/**
 * The `meta` table: identity and compatibility of a store, written once when it is created.
 *
 *   storeEpoch     8-byte big-endian random value; part of every cursor; never 0
 *   schemaVersion  integer; a binary opens only stores of its own STORE_SCHEMA_VERSION
 *   chainId        integer; set by the first open that names a chain, refused when another is named
 *   createdAt      ISO-8601 timestamp
 *   ancestorEpochs epochs (hex, oldest first) of the stores this one was copied from and re-epoched (epoch-rotation.ts);
 *                  absent in a store never rotated (and in stores rotated before it was recorded)
 */
import { randomBytes } from 'node:crypto';
import type { Database } from 'lmdb';
import { StoreChainMismatchError, StoreCorruptError, StoreSchemaVersionError } from './errors.js';
import { readU64 } from './keys.js';

export const STORE_SCHEMA_VERSION = 1;
export const STORE_EPOCH_BYTES = 8;

export type MetaTable = Database<unknown, string>;

export interface StoreMeta {
  readonly epoch: bigint;
  readonly schemaVersion: number;
  readonly chainId: number | null;
  readonly createdAt: string;
}

/** Meta values exactly as found on disk, for `db inspect` and `db verify`. */
export interface RawStoreMeta {
  readonly storeEpoch: unknown;
  readonly schemaVersion: unknown;
  readonly chainId: unknown;
  readonly createdAt: unknown;
}

export function readRawMeta(meta: MetaTable): RawStoreMeta {
  return {
    storeEpoch: meta.get('storeEpoch'),
    schemaVersion: meta.get('schemaVersion'),
    chainId: meta.get('chainId'),
    createdAt: meta.get('createdAt'),
  };
}

/** The epochs (hex, oldest first) this store descends from: a publisher continues their JetStream subjects (docs/jetstream.md "Resets"). */
export function readAncestorEpochs(meta: MetaTable): string[] {
  const value = meta.get('ancestorEpochs');
  return Array.isArray(value) ? value.filter((epoch): epoch is string => typeof epoch === 'string') : [];
}

export function isEmptyMeta(raw: RawStoreMeta): boolean {
  return raw.storeEpoch === undefined && raw.schemaVersion === undefined && raw.chainId === undefined && raw.createdAt === undefined;
}

/**
 * Creates the meta record of a new store, or validates an existing one and records the chain
 * id on the first open that names it. Runs in one write transaction, so threads racing to
 * create the same store agree on a single epoch. `storeHasOtherTables`: an empty meta next to
 * existing tables is damage, never a new store (a new epoch would silently invalidate cursors).
 */
export function ensureMeta(meta: MetaTable, path: string, chainId: number | undefined, storeHasOtherTables: boolean): StoreMeta {
  if (chainId !== undefined) assertChainId(chainId);
  return meta.transactionSync(() => {
    const raw = readRawMeta(meta);
    if (isEmptyMeta(raw)) {
      if (storeHasOtherTables) throw new StoreCorruptError(path, 'meta is empty but the store holds tables');
      return createMeta(meta, chainId);
    }
    const existing = validateMeta(raw, path);
    if (chainId === undefined) return existing;
    if (existing.chainId === null) {
      meta.putSync('chainId', chainId);
      return { ...existing, chainId };
    }
    if (existing.chainId !== chainId) throw new StoreChainMismatchError(path, existing.chainId, chainId);
    return existing;
  });
}

/** Checks meta as found on disk: schema version first, since another version may lay meta out differently. */
export function validateMeta(raw: RawStoreMeta, path: string): StoreMeta {
  if (raw.schemaVersion !== STORE_SCHEMA_VERSION) {
    if (raw.schemaVersion === undefined) throw new StoreCorruptError(path, 'meta has no schemaVersion');
    throw new StoreSchemaVersionError(path, raw.schemaVersion, STORE_SCHEMA_VERSION);
  }
  const epoch = epochFromBytes(raw.storeEpoch);
  if (epoch === undefined) throw new StoreCorruptError(path, `meta storeEpoch is not ${STORE_EPOCH_BYTES} non-zero bytes`);
  if (typeof raw.createdAt !== 'string') throw new StoreCorruptError(path, 'meta createdAt is missing');
  if (raw.chainId !== undefined && !isChainId(raw.chainId)) throw new StoreCorruptError(path, 'meta chainId is not a positive integer');
  return { epoch, schemaVersion: raw.schemaVersion, chainId: raw.chainId ?? null, createdAt: raw.createdAt };
}

export function epochFromBytes(value: unknown): bigint | undefined {
  if (!(value instanceof Uint8Array) || value.length !== STORE_EPOCH_BYTES) return undefined;
  const epoch = readU64(value);
  return epoch === 0n ? undefined : epoch;
}

export function epochToHex(epoch: bigint): string {
  return epoch.toString(16).padStart(STORE_EPOCH_BYTES * 2, '0');
}

export function isChainId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function assertChainId(chainId: number): void {
  if (!isChainId(chainId)) throw new RangeError(`chain id must be a positive safe integer, got ${chainId}`);
}

function createMeta(meta: MetaTable, chainId: number | undefined): StoreMeta {
  const epochBytes = newEpochBytes();
  const createdAt = new Date().toISOString();
  meta.putSync('storeEpoch', epochBytes);
  meta.putSync('schemaVersion', STORE_SCHEMA_VERSION);
  meta.putSync('createdAt', createdAt);
  if (chainId !== undefined) meta.putSync('chainId', chainId);
  return { epoch: readU64(epochBytes), schemaVersion: STORE_SCHEMA_VERSION, chainId: chainId ?? null, createdAt };
}

function newEpochBytes(): Buffer {
  for (;;) {
    const bytes = randomBytes(STORE_EPOCH_BYTES);
    if (readU64(bytes) !== 0n) return bytes;
  }
}
