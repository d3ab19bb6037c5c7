/**
 * Artifact replay (spec §4.5 `POST /admin/v1/processors/{source}/artifacts/replay`), committed by the target's lane
 * (the one writer of its tables): retained artifacts of the source instance — the same kind, version and options,
 * so the same map/delta contract — are decoded and applied through the target kind's `applyMapped` in chain order,
 * as finalized blocks, with their change envelopes, coverage and (ordered-state) reduce cursor in one write
 * transaction. `apply` is `applyMapped(map(block))`, so the target ends as processing those blocks live would leave it.
 *
 * Ordered-state targets continue exactly where their state is: the first replay starts at the source's first
 * processed block, every later one right after the target's reduce cursor, each artifact naming the previous block
 * as its parent. A block-local target skips blocks it already covers. A missing artifact ends the replay there
 * (`complete: false`); nothing partial of a block is ever committed.
 */
import { CodedError } from '../../runtime/errors.js';
import { coverBlock, readProgress, readRanges, writeProgress, type ProcessorProgress } from '../../store/coverage.js';
import { getRetained, readTotals } from '../../store/artifacts.js';
import type { ProcessorTables } from '../../store/store.js';
import { decodeDeltas } from '../kinds/sdk/delta-codec.js';
import { StateBatch } from '../kinds/sdk/state.js';
import type { CommitContext } from './commit.js';
import { ChangeGroupWriter } from './change-writer.js';
import type { KindContext } from '../kinds/sdk/kind.js';

export interface ArtifactReplayMessage {
  readonly type: 'artifacts.replay';
  readonly fromBlock: number;
  readonly toBlock: number;
  readonly limit: number;
}

export interface ArtifactReplayResult {
  readonly replayed: number;
  readonly skipped: number;
  /** The last block replayed or skipped (null: none). */
  readonly throughBlock: number | null;
  /** Where the next replay of this range starts, or null when the range is done. */
  readonly nextFromBlock: number | null;
  /** False when the limit cut the range or a retained artifact was missing. */
  readonly complete: boolean;
  /** The first block without a retained artifact, when that ended the replay. */
  readonly missingBlock: number | null;
  readonly progress: ProcessorProgress;
  readonly changes: number;
}

function conflict(message: string, details: Record<string, unknown>): CodedError {
  return new CodedError('conflict', message, details);
}

/** Where an ordered-state target's next replay must start. */
function expectedFrom(progress: ProcessorProgress, source: ProcessorTables): number {
  if (progress.reduceCursor !== null) return progress.reduceCursor.number + 1;
  const origin = readProgress(source.state).configuredStartBlock;
  if (origin === null) throw new CodedError('output_not_retained', 'the source processor has processed no block yet: nothing to replay', { retainedArtifacts: readTotals(source.artifacts).retainedCount });
  return origin;
}

export async function replayArtifacts(ctx: CommitContext, source: ProcessorTables, message: ArtifactReplayMessage, emittedAt: string): Promise<ArtifactReplayResult> {
  const ordered = ctx.ordering === 'ordered_state';
  const split = ctx.kind.artifacts;
  if (!split) throw new CodedError('unsupported_capability', `processor instance '${ctx.instance}' has a kind without a map/apply split: artifacts cannot be replayed into it`);
  let replayed = 0;
  let skipped = 0;
  let written = 0;
  let throughBlock: number | null = null;
  let missingBlock: number | null = null;
  const progress = await ctx.store.write(() => {
    let current = readProgress(ctx.tables.state);
    if (ordered) {
      const expected = expectedFrom(current, source);
      if (message.fromBlock !== expected) {
        throw conflict(`an ordered-state target reduces in chain order: its next block is ${expected}, not ${message.fromBlock}`, { expectedFromBlock: expected, reduceCursor: current.reduceCursor });
      }
    }
    const batch = ordered ? new StateBatch(ctx.tables.entities, ctx.tables.undo) : null;
    const kindContext: KindContext = batch ? { ...ctx.kindContext, stateBatch: batch } : ctx.kindContext;
    let changeSequence = current.changeSequence;
    const log = new ChangeGroupWriter({ changes: ctx.tables.changes, epoch: ctx.store.epoch, chainId: ctx.chainId, instance: ctx.instance });
    let last: { number: number; hash: `0x${string}`; parentHash: `0x${string}`; timestamp: number } | null = null;
    const ranges = readRanges(ctx.tables.coverage);
    for (let number = message.fromBlock; number <= message.toBlock && replayed + skipped < message.limit; number += 1) {
      if (!ordered && ranges.some((r) => r.from <= number && number <= r.to)) {
        skipped += 1;
        throughBlock = number;
        continue;
      }
      const artifact = getRetained(source.artifacts, number);
      if (!artifact) {
        missingBlock = number;
        break;
      }
      const cursor = current.reduceCursor;
      if (ordered && cursor !== null && artifact.parentHash !== cursor.hash) {
        throw conflict(`the artifact of block ${number} names parent ${artifact.parentHash}, not block ${cursor.number} (${cursor.hash}) the target's state reflects`, { blockNumber: number });
      }
      const block = { number, hash: artifact.hash, parentHash: artifact.parentHash, timestamp: artifact.timestamp };
      const head = { operation: 'apply', block, finality: 'finalized', schema: ctx.changeSchema, emittedAt } as const;
      for (const change of split.applyMapped(kindContext, decodeDeltas(artifact.payload), block, 'finalized')) {
        changeSequence += 1n;
        log.add(changeSequence, head, change);
        written += 1;
      }
      coverBlock(ctx.tables, number);
      current = {
        ...current,
        ...(ordered ? { reduceCursor: { number, hash: artifact.hash } } : {}),
        finalizedNumber: Math.max(current.finalizedNumber ?? number, number),
        configuredStartBlock: current.configuredStartBlock === null || number < current.configuredStartBlock ? number : current.configuredStartBlock,
      };
      last = block;
      replayed += 1;
      throughBlock = number;
    }
    batch?.flush();
    if (last !== null) {
      changeSequence += 1n;
      log.add(changeSequence, { operation: 'finalized', block: last, finality: 'finalized', schema: ctx.changeSchema, emittedAt }, { kind: ctx.kind.finalizedKind, key: null, dataJson: null });
      written += 1;
    }
    log.flush();
    current = { ...current, changeSequence, state: 'live', stateReason: null };
    writeProgress(ctx.tables.state, current);
    return current;
  });
  const done = missingBlock === null && (throughBlock ?? message.fromBlock - 1) >= message.toBlock;
  const nextFromBlock = done ? null : missingBlock ?? (throughBlock === null ? message.fromBlock : throughBlock + 1);
  return { replayed, skipped, throughBlock, nextFromBlock, complete: done, missingBlock, progress, changes: written };
}
