/**
 * A materialization job's chunk, committed by the processor lane (the one writer of its instance's tables): blocks
 * the history lane fetched from a history source, verified and recorded in the chain tables, applied through the
 * kind's own `apply` — exactly as a live block — in one write transaction with their change envelopes and coverage.
 *
 * Exactness: a block already covered is skipped inside the transaction (never processed twice, whoever covered it
 * first); a block above the instance's finalized block, or whose hash contradicts the canonical chain, fails the
 * chunk and nothing of it is committed (never phantom coverage). Only block-local kinds: an ordered-state kind
 * reduces in chain order, which a gap filled behind the live lane cannot honour.
 */
import { CodedError } from '../../runtime/errors.js';
import { bytesToHex, type Hex } from '../../net/eth/hex.js';
import { encodeChangeValue, putChange } from '../../store/change-log.js';
import { getCanonicalHash } from '../../store/chain-material.js';
import { coverBlock, readProgress, readRanges, writeProgress, type ProcessorProgress } from '../../store/coverage.js';
import { encodeCursor } from '../../store/cursor.js';
import { readBlockInput } from './block-input.js';
import type { CommitContext } from './commit.js';
import { renderEnvelope } from './envelope.js';

export type HistoryApplyMessage = {
  readonly type: 'history.apply';
  readonly job: string;
  /** Ascending, recorded and verified by the history lane. */
  readonly blocks: ReadonlyArray<{ readonly number: number; readonly hash: Hex }>;
};

export interface HistoryApplyResult {
  readonly applied: number;
  readonly skipped: number;
  readonly progress: ProcessorProgress;
  readonly changes: number;
}

export async function applyHistoryBlocks(ctx: CommitContext, message: HistoryApplyMessage, emittedAt: string): Promise<HistoryApplyResult> {
  if (ctx.ordering !== 'block_local') {
    throw new CodedError('unsupported_capability', `processor instance '${ctx.instance}' has an ordered-state kind; materialization jobs fill gaps of block-local kinds only`);
  }
  let applied = 0;
  let skipped = 0;
  let written = 0;
  const progress = await ctx.store.write(() => {
    let current = readProgress(ctx.tables.state);
    let changeSequence = current.changeSequence;
    const finalized = current.finalizedNumber;
    for (const { number, hash } of message.blocks) {
      if (finalized === null || number > finalized) {
        throw new CodedError('conflict', `block ${number} is above the finalized block ${finalized ?? 'none'} of instance '${ctx.instance}'; a materialization job processes finalized blocks only`);
      }
      const canonical = getCanonicalHash(ctx.store, number);
      if (canonical && bytesToHex(canonical) !== hash) {
        throw new CodedError('conflict', `block ${number} from the history source (${hash}) is not the canonical block ${bytesToHex(canonical)}`);
      }
      if (readRanges(ctx.tables.coverage).some((r) => r.from <= number && number <= r.to)) {
        skipped += 1;
        continue;
      }
      const input = readBlockInput(ctx.store, number, hash, ctx.needs);
      const block = { number, hash, parentHash: input.header.parentHash, timestamp: input.header.timestamp };
      for (const change of ctx.kind.apply(ctx.kindContext, input, 'finalized')) {
        changeSequence += 1n;
        const cursor = encodeCursor({ epoch: ctx.store.epoch, chainId: ctx.chainId, instance: ctx.instance, sequence: changeSequence, block: { number, hash } });
        const json = renderEnvelope({
          sequence: changeSequence, cursor, operation: 'apply', chainId: ctx.chainId, block, finality: 'finalized',
          kind: change.kind, schema: ctx.changeSchema, key: change.key, dataJson: change.dataJson, emittedAt,
        });
        putChange(ctx.tables.changes, changeSequence, encodeChangeValue('apply', cursor, json));
        written += 1;
      }
      coverBlock(ctx.tables, number);
      applied += 1;
      // Without a configured start, the instance's start is its lowest covered block.
      if (ctx.startBlock === null && (current.configuredStartBlock === null || number < current.configuredStartBlock)) current = { ...current, configuredStartBlock: number };
    }
    current = { ...current, changeSequence };
    writeProgress(ctx.tables.state, current);
    return current;
  });
  return { applied, skipped, progress, changes: written };
}
