/**
 * One processor commit: a batch of chain-journal moves applied in a single LMDB write transaction —
 * entity rows (through the kind), rendered change envelopes, coverage and the new journal
 * position together. That is what makes the node's own state exactly-once.
 */
import { bytesToHex, type Hex } from '../../net/eth/hex.js';
import { decodeHeader } from '../../net/eth/header.js';
import type { ChangeOperation } from '../../store/change-log.js';
import { coverBlock, readProgress, readRanges, uncoverBlock, writeProgress, type Finality, type ProcessorProgress } from '../../store/coverage.js';
import { getHeaderBytes } from '../../store/chain-material.js';
import { decodeJournalMove, type JournalMove } from '../../store/journal.js';
import { u64Key } from '../../store/keys.js';
import { hexToBytes } from '../../net/eth/hex.js';
import type { Store, ProcessorTables } from '../../store/store.js';
import { readBlockInput } from './block-input.js';
import type { EnvelopeBlock } from '../../store/change-envelope.js';
import { ChangeGroupWriter } from './change-writer.js';
import type { BoundKind, KindChange, KindContext, KindNeeds, KindOrdering } from '../kinds/sdk/kind.js';
import { checkpointDue, takeCheckpoint, type CheckpointPolicy } from './checkpoint.js';
import { StateBatch } from '../kinds/sdk/state.js';
import { ArtifactBudgetExceeded, artifactTxn, type ArtifactPolicy } from './artifacts.js';
import type { BinaryTable } from '../../store/store.js';

/** Rows and inverses an ordered-state batch holds in memory before it writes them out mid-commit. */
const BATCH_HELD_LIMIT = 100_000;

export interface CommitContext {
  readonly store: Store;
  readonly tables: ProcessorTables;
  /** The kind bound to this instance's options. */
  readonly kind: BoundKind;
  /** The kind's change schema label (every envelope carries it). */
  readonly changeSchema: string;
  /** The material the kind reads. */
  readonly needs: KindNeeds;
  readonly ordering: KindOrdering;
  /** Automatic recovery checkpoints (ordered-state kinds). */
  readonly checkpoints: CheckpointPolicy;
  readonly kindContext: KindContext;
  readonly instance: string;
  readonly chainId: number;
  readonly startBlock: number | null;
  /** `[processors.artifacts]` with `[budgets.artifacts]`, and the artifact tables of the other retaining instances. */
  readonly artifacts?: { readonly policy: ArtifactPolicy; readonly peers: readonly BinaryTable[] };
}

export interface CommitResult {
  readonly progress: ProcessorProgress;
  readonly changes: number;
  /** Journal moves committed. */
  readonly moves: number;
}

/** A batch's move `moveIndex` could not keep its artifact: nothing of the batch is committed (the moves before it may be, alone). */
export class BatchArtifactBudgetExceeded extends Error {
  constructor(readonly moveIndex: number, override readonly cause: ArtifactBudgetExceeded) {
    super(cause.message);
    this.name = 'BatchArtifactBudgetExceeded';
  }
}

/** Journal moves after `after`, at most `limit`. */
export function readMoves(store: Store, after: number, limit: number): Array<{ sequence: number; move: JournalMove }> {
  const moves: Array<{ sequence: number; move: JournalMove }> = [];
  for (const { key, value } of store.chain.journal.getRange({ start: u64Key(after + 1), limit })) {
    moves.push({ sequence: Number(key.readBigUInt64BE(0)), move: decodeJournalMove(value) });
  }
  return moves;
}

function envelopeBlock(store: Store, number: number, hash: Hex): EnvelopeBlock {
  const bytes = getHeaderBytes(store, hexToBytes(hash));
  if (!bytes) throw new Error(`block ${number} (${hash}) is in the journal but its header is not recorded`);
  const header = decodeHeader(bytes);
  return { number, hash, parentHash: header.parentHash, timestamp: header.timestamp };
}

export async function commitMoves(ctx: CommitContext, moves: ReadonlyArray<{ sequence: number; move: JournalMove }>, emittedAt: string): Promise<CommitResult> {
  let written = 0;
  const progress = await ctx.store.write(() => {
    // Ordered-state writes of the whole batch are held in memory and written once (see StateBatch).
    const batch = ctx.ordering === 'ordered_state' ? new StateBatch(ctx.tables.entities, ctx.tables.undo) : null;
    const kindContext: KindContext = batch ? { ...ctx.kindContext, stateBatch: batch } : ctx.kindContext;
    let current = readProgress(ctx.tables.state);
    let changeSequence = current.changeSequence;
    const log = new ChangeGroupWriter({ changes: ctx.tables.changes, epoch: ctx.store.epoch, chainId: ctx.chainId, instance: ctx.instance });
    const artifacts = artifactTxn(ctx.tables.artifacts, ctx.artifacts);
    let moveIndex = -1;
    const publish = (operation: ChangeOperation, block: EnvelopeBlock, finality: Finality, change: Pick<KindChange, 'kind' | 'key'> & { dataJson: string | null }) => {
      changeSequence += 1n;
      log.add(changeSequence, { operation, block, finality, schema: ctx.changeSchema, emittedAt }, change);
      written += 1;
    };
    for (const { sequence, move } of moves) {
      moveIndex += 1;
      const hash = bytesToHex(move.hash) as Hex;
      const inRange = ctx.startBlock === null || move.number >= ctx.startBlock;
      // A finalized block is never undone: an undo at or below finality is an old fork's, read by an instance seeded past it.
      if (move.op === 'undo' && current.finalizedNumber !== null && move.number <= current.finalizedNumber) {
        current = { ...current, journalSequence: sequence };
        continue;
      }
      if (move.op === 'apply' && inRange) {
        const finality: Finality = current.finalizedNumber !== null && move.number <= current.finalizedNumber ? 'finalized' : 'included';
        const input = readBlockInput(ctx.store, move.number, hash, ctx.needs, ctx.kind.logInterest);
        const block = { number: move.number, hash, parentHash: input.header.parentHash, timestamp: input.header.timestamp };
        let changes;
        try {
          changes = artifacts.apply(ctx.kind, kindContext, input, finality, current.finalizedNumber);
        } catch (error) {
          throw error instanceof ArtifactBudgetExceeded ? new BatchArtifactBudgetExceeded(moveIndex, error) : error;
        }
        for (const change of changes) publish('apply', block, finality, change);
        coverBlock(ctx.tables, move.number);
        current = { ...current, reduceCursor: { number: move.number, hash } };
        if (current.configuredStartBlock === null) current = { ...current, configuredStartBlock: ctx.startBlock ?? move.number };
      } else if (move.op === 'undo') {
        const changes = ctx.kind.undo(kindContext, move.number, hash, current.finalizedNumber);
        if (changes.length > 0) {
          const block = envelopeBlock(ctx.store, move.number, hash);
          for (const change of changes) publish('undo', block, 'included', change);
        }
        // A block that produced no changes (no Transfer in it, say) was still covered.
        uncoverBlock(ctx.tables, move.number);
        artifacts.undo(move.number);
        if (current.reduceCursor?.number === move.number) {
          const { parentHash } = envelopeBlock(ctx.store, move.number, hash);
          current = { ...current, reduceCursor: move.number > 0 ? { number: move.number - 1, hash: parentHash } : null };
        }
      } else if (move.op === 'finalize') {
        const previous = current.finalizedNumber ?? -1;
        if (move.number > previous) {
          const ranges = readRanges(ctx.tables.coverage);
          const covered = ranges.some((r) => r.from <= move.number && r.to > previous);
          ctx.kind.finalize(kindContext, previous + 1, move.number);
          artifacts.finalize(previous + 1, move.number);
          if (covered && ctx.ordering === 'ordered_state' && checkpointDue(ctx.checkpoints, current.finalizedNumber, move.number)) {
            batch?.flush();
            takeCheckpoint(ctx.tables, ctx.checkpoints, { number: move.number, hash }, changeSequence, ctx.kind.finalizedValue);
          }
          current = { ...current, finalizedNumber: move.number };
          if (covered) publish('finalized', envelopeBlock(ctx.store, move.number, hash), 'finalized', { kind: ctx.kind.finalizedKind, key: null, dataJson: null });
        }
      }
      current = { ...current, journalSequence: sequence };
      if (batch !== null && batch.size >= BATCH_HELD_LIMIT) batch.flush();
    }
    log.flush();
    batch?.flush();
    current = { ...current, changeSequence };
    writeProgress(ctx.tables.state, current);
    return current;
  });
  return { progress, changes: written, moves: moves.length };
}
