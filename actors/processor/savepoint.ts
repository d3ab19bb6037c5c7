/**
 * Portable savepoints of ordered-state instances (spec §2.9, §4.3), the processor lane's side:
 * `create` copies the private state as of the instance's finalized block into a checksummed,
 * versioned archive (store/savepoints.ts) kept under the given id; `delete` drops one; `seed`
 * starts a new instance from an archive — its state as of the savepoint's block, processing from
 * the next block on, `seededFromCheckpoint: true` — and `seedRefusal` says why an archive cannot
 * seed this instance (another chain, kind, version or options).
 */
import { readFileSync } from 'node:fs';
import { bytesToHex, type Hex } from '../../net/eth/hex.js';
import { CodedError } from '../../runtime/errors.js';
import { getCanonicalHash } from '../../store/chain-material.js';
import { rangeCovered, readProgress, readRanges, stateOrigin, writeProgress, type ProcessorProgress } from '../../store/coverage.js';
import {
  archiveDigest, decodeSavepoint, encodeSavepoint, getSavepoint, isSavepointId, putSavepoint, removeSavepoint,
  SAVEPOINT_FORMAT_VERSION, type SavepointHeader, type SavepointSummary,
} from '../../store/savepoints.js';
import { stateAsOf } from '../kinds/sdk/state.js';
import type { CommitContext } from './commit.js';

/** What a savepoint records of its origin, and what a seed must match. */
export interface SavepointIdentity {
  readonly chainId: number;
  readonly genesisHash: string;
  readonly processor: SavepointHeader['processor'];
}

/** Options as canonical JSON (keys sorted), so two equal configurations compare equal. */
export function canonicalOptions(options: unknown): unknown {
  if (Array.isArray(options)) return options.map(canonicalOptions);
  if (typeof options === 'object' && options !== null) {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(options).sort()) sorted[key] = canonicalOptions((options as Record<string, unknown>)[key]);
    return sorted;
  }
  return options;
}

export function createSavepoint(ctx: CommitContext, identity: SavepointIdentity, id: string, createdAt: string): Promise<SavepointSummary> {
  const { store, tables } = ctx;
  return store.write(() => {
    if (!isSavepointId(id)) throw new CodedError('invalid_request', 'a savepoint id is 1-64 characters A-Z a-z 0-9 . _ - starting with a letter or digit', { id: id.slice(0, 80) });
    if (getSavepoint(tables.savepoints, id)) throw new CodedError('conflict', `savepoint '${id}' already exists; delete it first to reuse the id`, { savepoint: id });
    const progress = readProgress(tables.state);
    const finalized = progress.finalizedNumber;
    const ranges = readRanges(tables.coverage);
    if (finalized === null || (!rangeCovered(ranges, finalized, finalized) && progress.seed?.blockNumber !== finalized)) {
      throw new CodedError('conflict', `processor has no finalized covered block yet (finalized: ${finalized ?? 'none'}); a savepoint holds the state as of a finalized block`, { savepoint: id, finalizedNumber: finalized });
    }
    const canonical = getCanonicalHash(store, finalized);
    if (!canonical) throw new CodedError('conflict', `finalized block ${finalized} is not recorded as canonical`, { savepoint: id, finalizedNumber: finalized });
    const blockHash = bytesToHex(canonical) as Hex;
    const rows = stateAsOf(tables.entities, tables.undo, finalized, (value) => (ctx.kind.finalizedValue ? ctx.kind.finalizedValue(value, finalized) ?? value : value));
    const header: SavepointHeader = {
      format: SAVEPOINT_FORMAT_VERSION, id, chainId: identity.chainId, genesisHash: identity.genesisHash, processor: identity.processor,
      block: { number: finalized, hash: blockHash }, stateFrom: stateOrigin(ranges, progress), rowCount: rows.length, createdAt,
    };
    const archive = encodeSavepoint(header, rows);
    const summary: SavepointSummary = { id, createdAt, blockNumber: finalized, blockHash, rowCount: rows.length, bytes: archive.length, digest: archiveDigest(archive) };
    putSavepoint(tables.savepoints, { ...summary, archive });
    return summary;
  });
}

export function deleteSavepoint(ctx: Pick<CommitContext, 'store' | 'tables'>, id: string): Promise<{ id: string; deleted: true }> {
  return ctx.store.write(() => {
    if (!getSavepoint(ctx.tables.savepoints, id)) throw new CodedError('not_found', `no savepoint '${id}' is kept for this processor`, { savepoint: id });
    removeSavepoint(ctx.tables.savepoints, id);
    return { id, deleted: true as const };
  });
}

/** Why this archive cannot seed an instance of `identity` (null: it can). */
export function seedRefusal(header: SavepointHeader, identity: SavepointIdentity): string | null {
  const made = `savepoint '${header.id}' (from processor '${header.processor.id}')`;
  if (header.chainId !== identity.chainId) return `${made} is of chain ${header.chainId}; this node serves chain ${identity.chainId}`;
  if (header.genesisHash !== identity.genesisHash) return `${made} is of another chain: its genesis is ${header.genesisHash}, this node's is ${identity.genesisHash}`;
  if (header.processor.kind !== identity.processor.kind) return `${made} is of kind '${header.processor.kind}'; this processor is kind '${identity.processor.kind}'`;
  if (header.processor.version !== identity.processor.version) return `${made} is of ${header.processor.kind} version ${header.processor.version}; this processor runs version ${identity.processor.version} (a savepoint seeds only the same kind and version)`;
  if (JSON.stringify(canonicalOptions(header.processor.options)) !== JSON.stringify(canonicalOptions(identity.processor.options))) {
    return `${made} was made with other options (${JSON.stringify(header.processor.options).slice(0, 200)}); its state does not fit this processor's options`;
  }
  return null;
}

/** Reads and checks a savepoint file: the archive's own checks, then whether it fits `identity`. */
export function readSeed(path: string, identity: SavepointIdentity): { header: SavepointHeader; rows: Array<[Buffer, Buffer]>; digest: string } {
  const archive = readFileSync(path);
  const { header, rows } = decodeSavepoint(archive);
  const refusal = seedRefusal(header, identity);
  if (refusal) throw new Error(refusal);
  return { header, rows, digest: archiveDigest(archive) };
}

/**
 * Seeds a new instance from a savepoint file, in one transaction: the archive's rows become the
 * state, the reduce cursor and finality move to its block, and the instance starts at the next one.
 * An instance already seeded from the same archive is left as is; one with any other state refuses.
 * Returns the seeded progress (or the stored one).
 */
export function seedFromSavepoint(ctx: Pick<CommitContext, 'store' | 'tables'>, path: string, identity: SavepointIdentity): Promise<ProcessorProgress> {
  const seed = readSeed(path, identity);
  return ctx.store.write(() => {
    const progress = readProgress(ctx.tables.state);
    if (progress.seed?.digest === seed.digest) return progress;
    if (progress.seed || progress.journalSequence !== 0 || progress.reduceCursor !== null || progress.changeSequence !== 0n || readRanges(ctx.tables.coverage).length > 0) {
      throw new Error(`processor instance '${ctx.tables.instance}' already has state; a savepoint seeds only a new instance (configure a new instance id)`);
    }
    for (const [key, value] of seed.rows) ctx.tables.entities.put(key, value);
    const block = { number: seed.header.block.number, hash: seed.header.block.hash as Hex };
    const seeded: ProcessorProgress = {
      ...progress, reduceCursor: block, finalizedNumber: block.number, configuredStartBlock: block.number + 1, seededFromCheckpoint: true,
      seed: { savepoint: seed.header.id, digest: seed.digest, blockNumber: block.number, blockHash: block.hash, stateFrom: seed.header.stateFrom },
    };
    writeProgress(ctx.tables.state, seeded);
    return seeded;
  });
}
