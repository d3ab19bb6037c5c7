/** Summary statistics for bench figures. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function summarize(values: readonly number[]): { min: number; median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0] ?? NaN, median: percentile(sorted, 50), max: sorted[sorted.length - 1] ?? NaN };
}
