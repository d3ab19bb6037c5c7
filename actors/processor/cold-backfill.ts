/**
 * Cold backfills (spec Operations summary, §2.1 `historicalTargetBlock`, §3.1): a `node_owned` instance whose
 * `start_block` lies before the chain's finalized block, with `history_mode` other than `on_demand` and a history
 * source configured, gets its history from that source instead of waiting for blocks it will never see live.
 *
 * On the instance's first start (nothing committed yet) one write transaction fixes the split:
 * - the target is the chain's finalized block F (the newest `finalize` move of the journal);
 * - the live lane begins right before the journal's apply of the canonical block F+1 (every move after it is one an
 *   instance following since F would have seen: undos below F+1 cannot follow a finalized F), so its first block is
 *   F+1 and blocks above F come live, with their reorgs;
 * - the history lane backfills [start_block, F] as a node-owned job (finalized blocks only, verified like live ones).
 *
 * Block-local kinds commit history beside their running live lane; ordered-state kinds reduce the history in chain
 * order first while the live lane holds (it has reduced nothing above F), so no state is ever computed over a gap.
 * The record lives in the instance's progress (`coldBackfill`) and is marked completed by the commit whose coverage
 * makes [start_block, F] whole (history-apply.ts); a restart resumes from coverage.
 *
 * A new instance whose start the journal cannot place yet waits (COLD_WAIT) instead of starting live: a fresh node
 * following an upstream (or peers) records its first blocks at the upstream's head, well above start_block, before
 * its finality lane reports the first finalized block. Starting live then would leave [start_block, first block)
 * a gap no one fills; the instance applies nothing until either finality reaches start_block (the split above) or
 * the journal is seen to reach start_block itself (a devnet from genesis, a node whose chain begins below it).
 */
import { getCanonicalHash } from '../../store/chain-material.js';
import { rangeCovered, readProgress, readRanges, writeProgress, type ColdBackfill, type ProcessorProgress } from '../../store/coverage.js';
import type { ProcessorTables, Store } from '../../store/store.js';
import { decodeJournalMove } from '../../store/journal.js';
import { decodeU64KeyAsNumber } from '../../store/keys.js';
import { journalFinalized, journalHead } from '../../store/chain-heads.js';

/** Where a cold backfill splits the chain: history through `targetBlock`, the live lane after `journalSequence`. */
export interface ColdSplit {
  readonly targetBlock: number;
  readonly journalSequence: number;
}

/**
 * The split for an instance starting at `startBlock` now, or null when none applies: nothing finalized yet, the
 * start above the finalized block (the journal reaches it), or the journal no longer holds the apply of F+1.
 */
export function coldSplit(store: Store, startBlock: number): ColdSplit | null {
  const head = journalHead(store);
  const finalized = journalFinalized(store)?.number ?? null;
  if (finalized === null || startBlock > finalized) return null;
  const next = getCanonicalHash(store, finalized + 1);
  if (!next) return { targetBlock: finalized, journalSequence: head };
  // The newest apply of the canonical F+1: the live lane starts right before it.
  for (const { key, value } of store.chain.journal.getRange({ reverse: true })) {
    const move = decodeJournalMove(value);
    if (move.op === 'apply' && move.number === finalized + 1 && Buffer.compare(Buffer.from(move.hash), next) === 0) {
      return { targetBlock: finalized, journalSequence: decodeU64KeyAsNumber(key) - 1 };
    }
  }
  return null;
}

/** Planning must wait: the journal neither holds a finalized block at or above start_block nor reaches it live. */
export const COLD_WAIT = 'wait' as const;

/**
 * Why a new instance waits (COLD_WAIT), with the numbers an operator needs: its start, the chain's first recorded
 * block, and the newest finalized block the journal holds (none yet, as a rule). Shown as the processor's
 * `stateReason` while it stays `starting`: an upstream whose finality never reaches the first recorded block (a
 * head that stands still) keeps it waiting, and this says so where the operator looks.
 */
export function coldWaitReason(store: Store, startBlock: number): string {
  const first = firstApplied(store);
  const finalized = journalFinalized(store)?.number ?? null;
  const recorded = first === null ? 'the node has recorded no block yet' : `the node's recorded chain begins at block ${first}`;
  const final = finalized === null ? 'no finalized block is recorded yet' : `the newest finalized block recorded is ${finalized}`;
  return `the cold backfill from start_block ${startBlock} waits for the chain's finalized block to reach the recorded chain: ${recorded}, ${final}; nothing is applied until then`;
}

/** True when the journal's oldest apply is at or below `startBlock`: the live lane sees the start itself. */
function journalReaches(store: Store, startBlock: number): boolean {
  const first = firstApplied(store);
  return first !== null && first <= startBlock;
}

/** The block of the journal's oldest apply (where the recorded chain begins), or null before any. */
function firstApplied(store: Store): number | null {
  for (const { value } of store.chain.journal.getRange({})) {
    const move = decodeJournalMove(value);
    if (move.op === 'apply') return move.number;
  }
  return null;
}

/** A new instance: nothing committed, no coverage, no record of a backfill. */
function isNew(progress: ProcessorProgress, tables: ProcessorTables): boolean {
  return progress.journalSequence === 0 && progress.changeSequence === 0n && !progress.coldBackfill && !progress.seed && readRanges(tables.coverage).length === 0;
}

/**
 * Plans the cold backfill of a new instance (one write transaction); answers the instance's backfill record — the
 * one just planned or the one a previous start planned — undefined when it has none (the live lane reaches its
 * start), or COLD_WAIT when the journal cannot tell yet (ask again after the next journal moves).
 */
export async function planColdBackfill(store: Store, tables: ProcessorTables, startBlock: number, source: string): Promise<ColdBackfill | undefined | typeof COLD_WAIT> {
  return store.write(() => {
    const progress = readProgress(tables.state);
    if (!isNew(progress, tables)) return progress.coldBackfill;
    const split = coldSplit(store, startBlock);
    if (split === null) return journalReaches(store, startBlock) ? undefined : COLD_WAIT;
    const coldBackfill: ColdBackfill = { fromBlock: startBlock, targetBlock: split.targetBlock, source, completed: false };
    writeProgress(tables.state, {
      ...progress, journalSequence: split.journalSequence, finalizedNumber: split.targetBlock, configuredStartBlock: startBlock, state: 'backfilling', stateReason: null, coldBackfill,
    });
    return coldBackfill;
  });
}

/** True while history below the live lane is still missing. */
export function backfillPending(progress: ProcessorProgress): boolean {
  return progress.coldBackfill !== undefined && !progress.coldBackfill.completed;
}

/** Marks a pending backfill completed when coverage already holds its range (a crash between a chunk and its record, say). */
export async function settleColdBackfill(store: Store, tables: ProcessorTables): Promise<ProcessorProgress> {
  return store.write(() => {
    const progress = readProgress(tables.state);
    const backfill = progress.coldBackfill;
    if (!backfill || backfill.completed || !rangeCovered(readRanges(tables.coverage), backfill.fromBlock, backfill.targetBlock)) return progress;
    const next = { ...progress, coldBackfill: { ...backfill, completed: true } };
    writeProgress(tables.state, next);
    return next;
  });
}
