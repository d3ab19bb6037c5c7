/** Pure range arithmetic of a materialization job over a processor's coverage (inclusive block ranges, ascending). */
import type { BlockRange } from '../../store/coverage.js';

/** Blocks of [from, to] that no range covers. */
export function missingCount(ranges: readonly BlockRange[], from: number, to: number): number {
  let covered = 0;
  for (const r of ranges) {
    const a = Math.max(r.from, from);
    const b = Math.min(r.to, to);
    if (a <= b) covered += b - a + 1;
  }
  return to - from + 1 - covered;
}

/** The first uncovered run at or after `from` within [from, to], cut to at most `limit` blocks; null when none. */
export function nextMissing(ranges: readonly BlockRange[], from: number, to: number, limit: number): BlockRange | null {
  let start = from;
  for (const r of ranges) {
    if (r.to < start) continue;
    if (r.from > start) break;
    start = r.to + 1;
  }
  if (start > to) return null;
  const nextCovered = ranges.find((r) => r.from > start);
  const end = Math.min(to, start + limit - 1, nextCovered ? nextCovered.from - 1 : Number.MAX_SAFE_INTEGER);
  return { from: start, to: end };
}

/** The last uncovered run at or below `to` within [from, to], cut to its top `limit` blocks; null when none. */
export function previousMissing(ranges: readonly BlockRange[], from: number, to: number, limit: number): BlockRange | null {
  let end = to;
  for (let i = ranges.length - 1; i >= 0; i -= 1) {
    const r = ranges[i]!;
    if (r.from > end) continue;
    if (r.to < end) break;
    end = r.from - 1;
  }
  if (end < from) return null;
  let lowestCovered = -1;
  for (const r of ranges) if (r.to < end && r.to > lowestCovered) lowestCovered = r.to;
  const start = Math.max(from, end - limit + 1, lowestCovered + 1);
  return { from: start, to: end };
}
