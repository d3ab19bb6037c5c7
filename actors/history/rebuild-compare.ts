/**
 * A rebuild's comparison (spec §9.5 "outputs compared"): the change logs of the serving instance and its replacement
 * over the finalized blocks both cover. What is compared is each output's value as of the top of that range: for
 * every (kind, key), the last change the instance wrote about a block of the range (applies a reorg undid drop out),
 * as its entity rows hold it — log order, not block order: a replacement's history arrives in chunks below its live
 * lane, and may fill a row (a fork's activation block, say) after its live lane first wrote it — its data with
 * every `finality` field removed (the serving instance saw a block live at `preview`/`included`, its replacement from
 * history at `finalized`). Envelope fields that differ by construction (sequence, cursor, origin, emittedAt) and the
 * block an output was first emitted at are not outputs: an instance emits its kind's static rows (a blob schedule,
 * say) at the first block it processes, which for a replacement is where its live lane began.
 *
 * Memory is one entry per (kind, key) of the compared range and one per undone block (each log is read twice).
 */
import { createHash } from 'node:crypto';
import { changeFacts, changeTail } from '../../store/change-log.js';
import { readProgress, readRanges, type BlockRange } from '../../store/coverage.js';
import type { ProcessorTables } from '../../store/store.js';
import type { RebuildComparison } from '../../store/rebuilds.js';
import type { BlockRef } from '../../store/chain-types.js';

interface Output {
  readonly block: number;
  readonly hash: string;
  /** sha256 of [kind, key, data without finality], hex. */
  readonly digest: string;
}

function withoutFinality(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutFinality);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) if (key !== 'finality') out[key] = withoutFinality(field);
  return out;
}

interface LoggedChange {
  readonly position: bigint;
  readonly operation: string;
  readonly envelope: { block: BlockRef | null; kind: string; key: string | null; data: unknown };
}

/** The apply and undo changes of a log about blocks of [from, to], in log order. */
function* blockChanges(tables: ProcessorTables, from: number, to: number): Generator<LoggedChange> {
  for (const change of changeFacts(tables.changes)) {
    if (change.operation !== 'apply' && change.operation !== 'undo') continue;
    const block = change.block;
    if (block === null || block.number < from || block.number > to) continue;
    yield { position: change.sequence, operation: change.operation, envelope: { block, kind: change.kind, key: change.key, data: change.dataJson === null ? null : JSON.parse(change.dataJson) } };
  }
}

/**
 * Each (kind, key)'s latest output in [from, to] from one change log, among blocks `inCommon` accepts: the last
 * apply in log order that no later undo of its block took back. Two passes over the log, so memory is one entry per
 * (kind, key) plus one per undo (a reorg's), never one per change of the range.
 */
function latestOutputs(tables: ProcessorTables, from: number, to: number, inCommon: (block: number) => boolean): Map<string, Output> {
  const lastUndo = new Map<string, bigint>();
  for (const { position, operation, envelope } of blockChanges(tables, from, to)) {
    if (operation === 'undo') lastUndo.set(`${envelope.block!.number}/${envelope.block!.hash}`, position);
  }
  const latest = new Map<string, Output>();
  for (const { position, operation, envelope } of blockChanges(tables, from, to)) {
    const block = envelope.block!;
    if (operation !== 'apply' || !inCommon(block.number)) continue;
    const undone = lastUndo.get(`${block.number}/${block.hash}`);
    if (undone !== undefined && undone > position) continue;
    const digest = createHash('sha256').update(JSON.stringify([envelope.kind, envelope.key, withoutFinality(envelope.data)])).digest('hex');
    latest.set(`${envelope.kind}\u0000${envelope.key ?? ''}`, { block: block.number, hash: block.hash, digest });
  }
  return latest;
}

/** The blocks of [from, to] both coverages hold. */
function commonBlocks(a: readonly BlockRange[], b: readonly BlockRange[], from: number, to: number): BlockRange[] {
  const out: BlockRange[] = [];
  for (const x of a) {
    for (const y of b) {
      const lo = Math.max(x.from, y.from, from);
      const hi = Math.min(x.to, y.to, to);
      if (lo <= hi) out.push({ from: lo, to: hi });
    }
  }
  return out.sort((p, q) => p.from - q.from);
}

function describe(outputKey: string): string {
  const [kind, key] = outputKey.split('\u0000');
  return `${kind} ${key === '' ? '(no key)' : key}`;
}

/**
 * The lowest block a log still holds every change of: 0 for a log never pruned; above the block of its oldest
 * retained change when its tail was pruned (`retain_changes`) — the changes before it are gone.
 */
function retainedFrom(tables: ProcessorTables): number {
  const tail = changeTail(tables.changes);
  if (tail === null || tail <= 1n) return 0;
  const first = changeFacts(tables.changes, tail).next();
  const block = first.done ? null : first.value.block?.number ?? null;
  return block === null ? 0 : block + 1;
}

/** Compares the two instances' outputs over the finalized blocks both cover (and both logs still hold), from `fromBlock` up. */
export function compareInstances(serving: ProcessorTables, replacement: ProcessorTables, fromBlock: number, now: string): RebuildComparison {
  const top = Math.min(readProgress(serving.state).finalizedNumber ?? -1, readProgress(replacement.state).finalizedNumber ?? -1);
  const bottom = Math.max(fromBlock, retainedFrom(serving), retainedFrom(replacement));
  const ranges = commonBlocks(readRanges(serving.coverage), readRanges(replacement.coverage), bottom, top);
  if (ranges.length === 0) {
    return { equal: true, fromBlock: null, toBlock: null, blocksCompared: 0, changesCompared: 0, firstDifference: null, comparedAt: now };
  }
  const from = ranges[0]!.from;
  const to = ranges[ranges.length - 1]!.to;
  const blocksCompared = ranges.reduce((sum, range) => sum + range.to - range.from + 1, 0);
  // Outputs of blocks only one instance covers (a gap of the serving instance) are not compared.
  const inCommon = (block: number) => ranges.some((range) => range.from <= block && block <= range.to);
  const left = latestOutputs(serving, from, to, inCommon);
  const right = latestOutputs(replacement, from, to, inCommon);
  let first: { blockNumber: number; reason: string } | null = null;
  let changesCompared = 0;
  for (const outputKey of new Set([...left.keys(), ...right.keys()])) {
    const a = left.get(outputKey);
    const b = right.get(outputKey);
    changesCompared += 1;
    if (a && b && a.digest === b.digest) continue;
    const blockNumber = Math.min(a?.block ?? Infinity, b?.block ?? Infinity);
    const reason = !a ? `${describe(outputKey)}: only the replacement has it (block ${b!.block})`
      : !b ? `${describe(outputKey)}: only the serving instance has it (block ${a.block})`
      : `${describe(outputKey)}: the serving instance's value (block ${a.block}) differs from the replacement's (block ${b.block})`;
    if (first === null || blockNumber < first.blockNumber) first = { blockNumber, reason };
  }
  return { equal: first === null, fromBlock: from, toBlock: to, blocksCompared, changesCompared, firstDifference: first, comparedAt: now };
}
