/**
 * A backfill subscription's chunk (spec §3.3), committed by the processor lane (the one writer of its instance's
 * tables and of its subscriptions' streams): blocks the history lane fetched from a history source, verified and
 * recorded in the chain tables, each run through the kind's own `apply` with finality `finalized`, and its changes
 * published into the subscription's stream (store/backfill-subscriptions.ts) with the stream's own sequences and
 * cursors, `originKind` `historical_backfill` (mode fill_missing) or `recompute`, and `originId` the subscription.
 *
 * A block the instance does not cover yet is also committed to the instance itself, exactly as a materialization
 * job's (history-apply.ts): entity rows, its own change log and coverage. A block already covered — another
 * subscription filled it first, or the live lane did — is re-mapped from the verified block: block-local kinds are
 * deterministic, so its rows are written again with the same bytes, and its changes go to the stream only.
 *
 * Everything (instance rows, coverage, both logs, both progress records) is one write transaction. A block at or
 * below the stream's last published block is skipped inside it, so a chunk asked again after kill -9 publishes
 * nothing twice; blocks must come in ascending order (the consumer reads its range in block order).
 */
import { CodedError } from '../../runtime/errors.js';
import { artifactTxn } from './artifacts.js';
import { INSTANCE_OWNER } from '../../store/artifacts.js';
import { coverBlock, readProgress, readRanges, writeProgress, type ProcessorProgress } from '../../store/coverage.js';
import { readBlockInput } from './block-input.js';
import type { CommitContext } from './commit.js';
import { ChangeGroupWriter } from './change-writer.js';
import { checkHistoryBlock } from './history-apply.js';
import type { BlockRef } from '../../store/chain-types.js';

export type HistoryPublishMessage = {
  readonly type: 'history.publish';
  readonly subscription: string;
  readonly stream: string;
  readonly originKind: 'historical_backfill' | 'recompute';
  /** Ascending, recorded and verified by the history lane. */
  readonly blocks: ReadonlyArray<BlockRef>;
};

export interface HistoryPublishResult {
  /** Blocks published into the stream by this call. */
  readonly published: number;
  /** Of those, blocks the instance did not cover before (committed to it too). */
  readonly filled: number;
  readonly progress: ProcessorProgress;
  /** Changes written to the instance's own log. */
  readonly changes: number;
  readonly streamHead: string;
  readonly publishedThrough: number | null;
}

export async function publishHistoryBlocks(ctx: CommitContext, message: HistoryPublishMessage, emittedAt: string): Promise<HistoryPublishResult> {
  if (ctx.ordering !== 'block_local') {
    throw new CodedError('unsupported_capability', `processor instance '${ctx.instance}' has an ordered-state kind: its changes at a block depend on the state reduced before it, so a backfill subscription cannot republish them`);
  }
  // Named tables are opened outside the write transaction.
  const stream = ctx.store.processor(message.stream);
  let published = 0;
  let filled = 0;
  let written = 0;
  let streamProgress = readProgress(stream.state);
  const progress = await ctx.store.write(() => {
    let current = readProgress(ctx.tables.state);
    streamProgress = readProgress(stream.state);
    let changeSequence = current.changeSequence;
    let streamSequence = streamProgress.changeSequence;
    let last = streamProgress.reduceCursor;
    const finalized = current.finalizedNumber;
    const instanceLog = new ChangeGroupWriter({ changes: ctx.tables.changes, epoch: ctx.store.epoch, chainId: ctx.chainId, instance: ctx.instance });
    const streamLog = new ChangeGroupWriter({ changes: stream.changes, epoch: ctx.store.epoch, chainId: ctx.chainId, instance: message.stream });
    const artifacts = artifactTxn(ctx.tables.artifacts, ctx.artifacts);
    const owners = [INSTANCE_OWNER, { ownerKind: 'processor_job', ownerId: message.subscription } as const];
    for (const { number, hash } of message.blocks) {
      if (last !== null && number <= last.number) continue;
      checkHistoryBlock(ctx, finalized, number, hash, 'a backfill subscription publishes finalized blocks only');
      const covered = readRanges(ctx.tables.coverage).some((r) => r.from <= number && number <= r.to);
      const input = readBlockInput(ctx.store, number, hash, ctx.needs, ctx.kind.logInterest);
      const block = { number, hash, parentHash: input.header.parentHash, timestamp: input.header.timestamp };
      // A block the instance did not hold yet is filled into it, with its artifact owned by the instance and the subscription.
      const changes = covered ? ctx.kind.apply(ctx.kindContext, input, 'finalized') : artifacts.apply(ctx.kind, ctx.kindContext, input, 'finalized', finalized, owners);
      const head = { operation: 'apply', block, finality: 'finalized', schema: ctx.changeSchema, emittedAt } as const;
      const streamHead = { ...head, originKind: message.originKind, originId: message.subscription };
      for (const change of changes) {
        if (!covered) {
          changeSequence += 1n;
          instanceLog.add(changeSequence, head, change);
          written += 1;
        }
        streamSequence += 1n;
        streamLog.add(streamSequence, streamHead, change);
      }
      if (!covered) {
        coverBlock(ctx.tables, number);
        filled += 1;
        if (ctx.startBlock === null && (current.configuredStartBlock === null || number < current.configuredStartBlock)) current = { ...current, configuredStartBlock: number };
      }
      last = { number, hash };
      published += 1;
    }
    instanceLog.flush();
    streamLog.flush();
    current = { ...current, changeSequence };
    writeProgress(ctx.tables.state, current);
    streamProgress = { ...streamProgress, changeSequence: streamSequence, reduceCursor: last };
    writeProgress(stream.state, streamProgress);
    return current;
  });
  return { published, filled, progress, changes: written, streamHead: streamProgress.changeSequence.toString(), publishedThrough: streamProgress.reduceCursor?.number ?? null };
}
