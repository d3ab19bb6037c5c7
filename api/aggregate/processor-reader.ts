/**
 * Reads one processor instance's tables from the listener's read-only store: coverage, change-log
 * bounds and the chain's live head. Reads made in one synchronous turn share one LMDB read
 * snapshot. An instance whose lane has not created its tables yet reads as empty.
 *
 * Covered ranges and the stored progress are decoded once per change of the instance's progress
 * record (store/coverage.ts `progressRecordIs`), which is checked in the caller's snapshot: a request
 * costs one key lookup for them instead of a range scan and two msgpack decodes.
 */
import type { ProcessorTables, Store } from '../../store/store.js';
import { StoreTableMissingError } from '../../store/errors.js';
import { changeHead, changeTail } from '../../store/change-log.js';
import { describeCoverage, progressRecord, progressRecordIs, readProgress, readRanges, INITIAL_PROGRESS, type BlockRange, type ProcessorCoverage, type ProcessorProgress } from '../../store/coverage.js';
import type { ConfiguredProcessor } from './configured-processors.js';
import { coverageStateOf } from './lane-health.js';
import { canonicalHead } from '../../store/chain-heads.js';

export interface LiveHead {
  readonly number: number;
  readonly hash: string;
}

export interface BlockInterval {
  readonly fromBlock: number;
  readonly toBlock: number;
}

/** The instance's tables, or null while its lane has not created them. */
export function processorTables(store: Store, instance: string): ProcessorTables | null {
  try {
    return store.processor(instance);
  } catch (error) {
    if (error instanceof StoreTableMissingError) return null;
    throw error;
  }
}

/** The highest canonical block recorded by the chain lane, or null before the first. */
export function liveHead(store: Store): LiveHead | null {
  return canonicalHead(store);
}

interface CoverageSnapshot {
  /** A copy of the progress record these were decoded under. */
  readonly stamp: Buffer;
  readonly ranges: readonly BlockRange[];
  readonly stored: ProcessorProgress;
}

const snapshots = new WeakMap<ProcessorTables, CoverageSnapshot>();
const NOTHING_COVERED: readonly BlockRange[] = Object.freeze([]);

function coverageSnapshot(tables: ProcessorTables): { ranges: readonly BlockRange[]; stored: ProcessorProgress } {
  const cached = snapshots.get(tables);
  if (cached && progressRecordIs(tables.state, cached.stamp)) return cached;
  const stamp = progressRecord(tables.state);
  // No progress record yet: the lane has not committed; read as is and remember nothing.
  if (stamp === undefined) return { ranges: readRanges(tables.coverage), stored: readProgress(tables.state) };
  const fresh: CoverageSnapshot = { stamp, ranges: Object.freeze(readRanges(tables.coverage)), stored: readProgress(tables.state) };
  snapshots.set(tables, fresh);
  return fresh;
}

export function coveredRanges(tables: ProcessorTables | null): readonly BlockRange[] {
  return tables ? coverageSnapshot(tables).ranges : NOTHING_COVERED;
}

export function progressOf(processor: ConfiguredProcessor, tables: ProcessorTables | null): ProcessorProgress {
  const stored = tables ? coverageSnapshot(tables).stored : INITIAL_PROGRESS;
  const progress = { ...stored, state: coverageStateOf(processor.id, stored.state) };
  return progress.configuredStartBlock === null && processor.startBlock !== null ? { ...progress, configuredStartBlock: processor.startBlock } : progress;
}

/** ProcessorCoverage (spec §2.1) of one instance, with `requested` when the caller names a range. */
export function readCoverage(store: Store, chainId: number, processor: ConfiguredProcessor, requested?: BlockInterval): ProcessorCoverage {
  const tables = processorTables(store, processor.instance);
  const head = liveHead(store);
  return describeCoverage({
    chainId,
    ranges: coveredRanges(tables),
    progress: progressOf(processor, tables),
    liveHeadBlock: head?.number ?? null,
    liveHeadHash: head?.hash ?? null,
    ...(requested ? { requested } : {}),
    orderedState: processor.info.ordering === 'ordered_state',
  });
}

export interface ChangeBounds {
  /** The highest sequence ever written (0 before the first change). */
  readonly head: bigint;
  /** The lowest retained sequence, or null when nothing is retained. */
  readonly tail: bigint | null;
}

export function changeBounds(processor: ConfiguredProcessor, tables: ProcessorTables | null): ChangeBounds {
  if (!tables) return { head: 0n, tail: null };
  const logged = changeHead(tables.changes);
  const progressed = BigInt(progressOf(processor, tables).changeSequence);
  return { head: logged > progressed ? logged : progressed, tail: changeTail(tables.changes) };
}
