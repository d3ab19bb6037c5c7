/**
 * Coverage of a block-local processor instance: the inclusive block ranges it holds output for
 * (`p.<instance>.coverage`: u64 first block → msgpack { to }), plus the instance's progress record
 * in `p.<instance>.state` under `progress`. Written by the instance's own lane only.
 */
import { decodeU64KeyAsNumber, u64Key } from './keys.js';
import type { BinaryKeyedRecordTable, BinaryTable, ProcessorTables } from './store.js';
import { encode, decode } from '../runtime/codec.js';
import type { Finality } from './chain-types.js';

export type CoverageState = 'starting' | 'backfilling' | 'catching_up' | 'live' | 'degraded' | 'failed';
export type { Finality } from './chain-types.js';

export interface BlockRange {
  readonly from: number;
  readonly to: number;
}

/** What a processor lane records with every commit. */
export interface ProcessorProgress {
  /** The last chain-journal sequence this instance has applied. */
  readonly journalSequence: number;
  /** The last change sequence written. */
  readonly changeSequence: bigint;
  /** Highest block number recorded as finalized (its blocks at or below are finalized). */
  readonly finalizedNumber: number | null;
  /** The configured start, fixed at the first applied block when the configuration names none. */
  readonly configuredStartBlock: number | null;
  readonly state: CoverageState;
  readonly stateReason: string | null;
  /** The block the instance's state reflects (the last applied block, or the parent of the last undone one); null before the first. */
  readonly reduceCursor: { readonly number: number; readonly hash: `0x${string}` } | null;
  /** True when the private state was seeded from a checkpoint rather than reduced from the configured start. */
  readonly seededFromCheckpoint: boolean;
  /** The savepoint the state was seeded from (absent: none). */
  readonly seed?: ProcessorSeed;
  /** A cold backfill (actors/processor/cold-backfill.ts): history [fromBlock, targetBlock] the node fills from `source` (absent: none). */
  readonly coldBackfill?: ColdBackfill;
}

/** The history an instance that started after its `start_block` is backfilled with, below its live lane's first block. */
export interface ColdBackfill {
  readonly fromBlock: number;
  /** The finalized block the live lane begins right after (spec §2.1 `historicalTargetBlock`). */
  readonly targetBlock: number;
  readonly source: string;
  /** Set by the processor lane once coverage holds every block of [fromBlock, targetBlock]. */
  readonly completed: boolean;
}

/** Where a seeded instance's state came from: a savepoint's state as of a finalized block. */
export interface ProcessorSeed {
  readonly savepoint: string;
  /** sha256 of the archive, hex. */
  readonly digest: string;
  readonly blockNumber: number;
  readonly blockHash: `0x${string}`;
  /** The seed's state reflects every block from here through `blockNumber` (null: not gap-free). */
  readonly stateFrom: number | null;
}

/**
 * The first block of the gap-free run of blocks the state reflects, through the newest covered one:
 * the single covered range's start, or — for a seeded instance whose coverage continues right after
 * its seed — the seed's own `stateFrom`. Null when the coverage has gaps (or a seed's history does).
 */
export function stateOrigin(ranges: readonly BlockRange[], progress: ProcessorProgress): number | null {
  const seed = progress.seed;
  if (seed) {
    if (ranges.length === 0) return seed.stateFrom;
    return ranges.length === 1 && ranges[0]!.from === seed.blockNumber + 1 ? seed.stateFrom : null;
  }
  return ranges.length === 1 ? ranges[0]!.from : null;
}

export const INITIAL_PROGRESS: ProcessorProgress = {
  journalSequence: 0, changeSequence: 0n, finalizedNumber: null, configuredStartBlock: null, state: 'starting', stateReason: null, reduceCursor: null, seededFromCheckpoint: false,
};

const PROGRESS_KEY = Buffer.from('progress');

export function readProgress(state: BinaryTable): ProcessorProgress {
  const value = state.getBinary(PROGRESS_KEY);
  return value ? { ...INITIAL_PROGRESS, ...decode<ProcessorProgress>(value) } : INITIAL_PROGRESS;
}

/**
 * For readers that cache what they derive from coverage: every commit that changes coverage
 * rewrites the progress record in the same transaction (its journal position moves with it), so an
 * unchanged record means unchanged coverage and progress. `progressRecord` copies the raw record;
 * `progressRecordIs` checks, without copying, whether the record still has exactly those bytes.
 */
export function progressRecord(state: BinaryTable): Buffer | undefined {
  return state.getBinary(PROGRESS_KEY);
}

export function progressRecordIs(state: BinaryTable, bytes: Uint8Array): boolean {
  // getBinaryFast hands out a shared buffer whose `length` (not byteLength) is the value's size.
  const current = state.getBinaryFast(PROGRESS_KEY);
  if (current === undefined || current.length !== bytes.length) return false;
  for (let i = 0; i < bytes.length; i += 1) if (current[i] !== bytes[i]) return false;
  return true;
}

export function writeProgress(state: BinaryTable, progress: ProcessorProgress): void {
  state.put(PROGRESS_KEY, Buffer.from(encode(progress)));
}

export function readRanges(coverage: BinaryKeyedRecordTable): BlockRange[] {
  const ranges: BlockRange[] = [];
  for (const { key, value } of coverage.getRange({})) ranges.push({ from: decodeU64KeyAsNumber(key), to: (value as { to: number }).to });
  return ranges;
}

/** Adds one block to coverage, merging with adjacent ranges; call inside the write transaction. */
export function coverBlock(tables: ProcessorTables, number: number): void {
  const ranges = readRanges(tables.coverage);
  const before = ranges.find((r) => r.to === number - 1);
  const after = ranges.find((r) => r.from === number + 1);
  if (ranges.some((r) => r.from <= number && number <= r.to)) return;
  const from = before ? before.from : number;
  const to = after ? after.to : number;
  if (after) tables.coverage.remove(u64Key(after.from));
  tables.coverage.put(u64Key(from), { to });
}

/** Removes one block from coverage, splitting a range if needed; call inside the write transaction. */
export function uncoverBlock(tables: ProcessorTables, number: number): void {
  const range = readRanges(tables.coverage).find((r) => r.from <= number && number <= r.to);
  if (!range) return;
  tables.coverage.remove(u64Key(range.from));
  if (range.from < number) tables.coverage.put(u64Key(range.from), { to: number - 1 });
  if (number < range.to) tables.coverage.put(u64Key(number + 1), { to: range.to });
}

export interface ProcessorCoverage {
  readonly chainId: number;
  readonly requested?: { readonly fromBlock: number; readonly toBlock: number };
  readonly available: ReadonlyArray<{ readonly fromBlock: number; readonly toBlock: number; readonly finality: Finality }>;
  readonly configuredStartBlock: number;
  readonly historicalTargetBlock: number | null;
  readonly liveHeadBlock: number | null;
  readonly processedThrough: number | null;
  readonly finalizedThrough: number | null;
  readonly complete: boolean;
  readonly state: CoverageState;
  /** Ordered-state instances only. */
  readonly reduceCursor?: { readonly number: number; readonly hash: `0x${string}` } | null;
  /** The highest block the node has accepted for this instance that its reduce has not folded in yet (null: nothing pending). */
  readonly pendingThrough?: number | null;
  readonly seededFromCheckpoint?: boolean;
}

/**
 * ProcessorCoverage per spec §2.1: intervals split at gaps and at the finality boundary;
 * `processedThrough` only when the first interval begins at the configured start (then the range
 * from the start through it has no gaps, which is all `complete` claims).
 */
export function describeCoverage(input: {
  chainId: number;
  ranges: readonly BlockRange[];
  progress: ProcessorProgress;
  liveHeadBlock: number | null;
  /** The hash of the live head block (ordered-state `pendingThrough`: a reduce cursor at the head's height on another branch is behind). */
  liveHeadHash?: string | null;
  requested?: { fromBlock: number; toBlock: number };
  /** An ordered-state instance: coverage also carries reduceCursor, pendingThrough and seededFromCheckpoint (spec §2.1). */
  orderedState?: boolean;
}): ProcessorCoverage {
  const { ranges, progress } = input;
  const finalized = progress.finalizedNumber;
  const available: Array<{ fromBlock: number; toBlock: number; finality: Finality }> = [];
  for (const range of ranges) {
    if (finalized !== null && range.from <= finalized) {
      available.push({ fromBlock: range.from, toBlock: Math.min(range.to, finalized), finality: 'finalized' });
      if (range.to > finalized) available.push({ fromBlock: finalized + 1, toBlock: range.to, finality: 'included' });
    } else {
      available.push({ fromBlock: range.from, toBlock: range.to, finality: 'included' });
    }
  }
  const configuredStartBlock = progress.configuredStartBlock ?? ranges[0]?.from ?? 0;
  const first = ranges[0];
  const processedThrough = first && first.from === configuredStartBlock ? first.to : null;
  const finalizedThrough = finalized === null ? null : available.filter((a) => a.finality === 'finalized').reduce<number | null>((max, a) => Math.max(max ?? -1, a.toBlock), null);
  return {
    chainId: input.chainId,
    ...(input.requested ? { requested: input.requested } : {}),
    available,
    configuredStartBlock,
    historicalTargetBlock: progress.coldBackfill?.targetBlock ?? null,
    liveHeadBlock: input.liveHeadBlock,
    processedThrough,
    finalizedThrough,
    complete: processedThrough !== null,
    state: progress.state,
    ...(input.orderedState ? { reduceCursor: progress.reduceCursor, pendingThrough: pendingThrough(progress, configuredStartBlock, input.liveHeadBlock, input.liveHeadHash ?? null), seededFromCheckpoint: progress.seededFromCheckpoint } : {}),
  };
}

/**
 * Ordered-state `pendingThrough` (spec §2.1): the chain lane has accepted blocks through the live
 * head; those past the reduce cursor (or the head itself, when the cursor sits on another branch at
 * its height) are pending for this instance until its reduce folds them in. Null when the state
 * reflects the head, or when the head is below the configured start (nothing to reduce yet).
 */
export function pendingThrough(progress: ProcessorProgress, configuredStartBlock: number, headNumber: number | null, headHash: string | null): number | null {
  if (headNumber === null || headNumber < configuredStartBlock) return null;
  const cursor = progress.reduceCursor;
  if (cursor === null || cursor.number < headNumber) return headNumber;
  if (cursor.number === headNumber && headHash !== null && cursor.hash !== headHash) return headNumber;
  return null;
}

/** True when every block of [from, to] is covered. */
export function rangeCovered(ranges: readonly BlockRange[], from: number, to: number): boolean {
  return ranges.some((r) => r.from <= from && to <= r.to);
}
