/**
 * Millisecond latencies of millions of events in constant memory: one counter per millisecond up
 * to a ceiling (Date has millisecond resolution, so nothing finer is lost), and the exact maximum.
 */
export class LatencyHistogram {
  private readonly counts: Uint32Array;
  private total = 0;
  private highest = 0;

  constructor(private readonly ceilingMs = 120_000) {
    this.counts = new Uint32Array(ceilingMs + 1);
  }

  record(ms: number, times = 1): void {
    const value = Math.max(0, Math.round(ms));
    this.counts[Math.min(value, this.ceilingMs)]! += times;
    this.total += times;
    if (value > this.highest) this.highest = value;
  }

  /** Non-empty buckets as [ms, count] (the last one at the exact maximum), to merge across processes. */
  entries(): Array<[number, number]> {
    const entries: Array<[number, number]> = [];
    this.counts.forEach((count, ms) => {
      if (count > 0) entries.push([ms === this.ceilingMs ? this.highest : ms, count]);
    });
    return entries;
  }

  get count(): number {
    return this.total;
  }

  get max(): number {
    return this.total === 0 ? NaN : this.highest;
  }

  /** The smallest latency that at least p % of the events did not exceed. */
  percentile(p: number): number {
    if (this.total === 0) return NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * this.total));
    let seen = 0;
    for (let ms = 0; ms < this.counts.length; ms += 1) {
      seen += this.counts[ms]!;
      if (seen >= rank) return ms;
    }
    return this.highest;
  }
}
