/** Wall time spent in each stage of the verified ingest, summed over blocks (plain numbers, so workers can return it). */
export const INGEST_STAGES = ['split block', 'verify (hash, roots, bloom)', 'decode blob transactions', 'blob transform (+blob senders)', 'render rows', 'commit'] as const;

export type IngestStage = (typeof INGEST_STAGES)[number];
export type StageTotals = Record<IngestStage, number>;

export function emptyStageTotals(): StageTotals {
  return Object.fromEntries(INGEST_STAGES.map((stage) => [stage, 0])) as StageTotals;
}

export function addStageTotals(into: StageTotals, more: StageTotals): void {
  for (const stage of INGEST_STAGES) into[stage] += more[stage];
}

export function timed<T>(totals: StageTotals, stage: IngestStage, work: () => T): T {
  const started = performance.now();
  try {
    return work();
  } finally {
    totals[stage] += performance.now() - started;
  }
}

export async function timedAsync<T>(totals: StageTotals, stage: IngestStage, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    totals[stage] += performance.now() - started;
  }
}
