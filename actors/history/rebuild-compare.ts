/**
 * A rebuild's comparison (spec §9.5 "outputs compared"): the change logs of the serving instance and its replacement
 * over the blocks both hold as finalized. Per block, the outputs are the changes that block's canonical apply left —
 * applies later undone by a reorg drop out — each reduced to (kind, key, data) with every `finality` field removed
 * (the serving instance saw a block live at `preview`/`included`, its replacement from history at `finalized`);
 * envelope fields that differ by construction (sequence, cursor, origin, emittedAt) are not outputs.
 *
 * Memory is one 32-byte digest per change of the compared range (both logs are read once).
 */
import { createHash } from 'node:crypto';
import { decodeChangeValue } from '../../store/change-log.js';
import { readProgress, readRanges, type BlockRange } from '../../store/coverage.js';
import type { ProcessorTables } from '../../store/env.js';
import type { RebuildComparison } from '../../store/rebuilds.js';

interface BlockOutputs {
  /** The block hash of the apply these outputs came from. */
  hash: string;
  /** sha256 of each change's normalized output, hex. */
  digests: string[];
}

function withoutFinality(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutFinality);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) if (key !== 'finality') out[key] = withoutFinality(field);
  return out;
}

/** Each block's surviving outputs in [from, to] from one change log. */
function outputsByBlock(tables: ProcessorTables, from: number, to: number): Map<number, BlockOutputs> {
  const blocks = new Map<number, BlockOutputs>();
  for (const { key, value } of tables.changes.getRange({})) {
    const change = decodeChangeValue(key.readBigUInt64BE(0), value);
    if (change.operation !== 'apply' && change.operation !== 'undo') continue;
    const envelope = JSON.parse(change.json.toString('utf8')) as { block: { number: number; hash: string } | null; kind: string; key: string | null; data: unknown };
    const block = envelope.block;
    if (block === null || block.number < from || block.number > to) continue;
    const current = blocks.get(block.number);
    if (change.operation === 'undo') {
      if (current?.hash === block.hash) blocks.delete(block.number);
      continue;
    }
    const digest = createHash('sha256').update(JSON.stringify([envelope.kind, envelope.key, withoutFinality(envelope.data)])).digest('hex');
    if (current && current.hash === block.hash) current.digests.push(digest);
    else blocks.set(block.number, { hash: block.hash, digests: [digest] });
  }
  return blocks;
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

function differenceAt(serving: BlockOutputs | undefined, replacement: BlockOutputs | undefined): string | null {
  if (!serving && !replacement) return null;
  if (!serving) return `the replacement has ${replacement!.digests.length} change(s) for this block, the serving instance none (its change log may have been pruned below it)`;
  if (!replacement) return `the serving instance has ${serving.digests.length} change(s) for this block, the replacement none`;
  if (serving.hash !== replacement.hash) return `the instances hold different block hashes (${serving.hash} serving, ${replacement.hash} replacement)`;
  if (serving.digests.length !== replacement.digests.length) return `the serving instance has ${serving.digests.length} change(s) for this block, the replacement ${replacement.digests.length}`;
  const a = [...serving.digests].sort();
  const b = [...replacement.digests].sort();
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return 'a change\'s kind, key or data differs (finality fields aside)';
  return null;
}

/** Compares the two instances' outputs over the finalized blocks both cover, from `fromBlock` up. */
export function compareInstances(serving: ProcessorTables, replacement: ProcessorTables, fromBlock: number, now: string): RebuildComparison {
  const top = Math.min(readProgress(serving.state).finalizedNumber ?? -1, readProgress(replacement.state).finalizedNumber ?? -1);
  const ranges = commonBlocks(readRanges(serving.coverage), readRanges(replacement.coverage), fromBlock, top);
  if (ranges.length === 0) {
    return { equal: true, fromBlock: null, toBlock: null, blocksCompared: 0, changesCompared: 0, firstDifference: null, comparedAt: now };
  }
  const from = ranges[0]!.from;
  const to = ranges[ranges.length - 1]!.to;
  const left = outputsByBlock(serving, from, to);
  const right = outputsByBlock(replacement, from, to);
  let blocksCompared = 0;
  let changesCompared = 0;
  for (const range of ranges) {
    for (let number = range.from; number <= range.to; number += 1) {
      const reason = differenceAt(left.get(number), right.get(number));
      if (reason !== null) {
        return { equal: false, fromBlock: from, toBlock: to, blocksCompared, changesCompared, firstDifference: { blockNumber: number, reason }, comparedAt: now };
      }
      blocksCompared += 1;
      changesCompared += left.get(number)?.digests.length ?? 0;
    }
  }
  return { equal: true, fromBlock: from, toBlock: to, blocksCompared, changesCompared, firstDifference: null, comparedAt: now };
}
