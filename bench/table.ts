/** The plain-text tables `npm run bench` prints: one per workload run, and one per scaling series. */
import { isHeadline } from './figure-kinds.js';
import type { WorkloadRun } from './result-file.js';
import type { Figure } from './workload.js';

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  if (value === 0) return '0';
  return value.toPrecision(3);
}

export function formatRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : '—';
}

/** Columns after the first `leftAligned` are right-aligned. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[], leftAligned = 2): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i >= leftAligned ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function figureRow(f: Figure, withBaseline: boolean): string[] {
  const row = [f.name, f.unit, formatNumber(f.min), formatNumber(f.median), formatNumber(f.max)];
  return withBaseline ? [...row, f.baseline ? formatNumber(f.baseline.median) : '', f.ratio ? formatRatio(f.ratio.median) : ''] : row;
}

export function runHeading(run: WorkloadRun): string {
  const point = run.point ? ` [${run.point.key}=${run.point.value}]` : '';
  return `${run.workload}${point} — ${run.description} (${run.seconds.toFixed(1)} s)`;
}

/** One workload run: every figure with min/median/max over rounds, its baseline's median and the median ratio. */
export function runTable(run: WorkloadRun): string {
  if (run.error) return `${runHeading(run)}\nFAILED: ${run.error}`;
  const baselines = [...new Set(run.figures.flatMap((f) => (f.baseline ? [f.baseline.name] : [])))];
  const withBaseline = baselines.length > 0;
  const header = ['figure', 'unit', 'min', 'median', 'max', ...(withBaseline ? ['baseline', 'ratio'] : [])];
  const note = withBaseline ? `\nbaseline: median of ${baselines.join(', ')} in the same run; ratio: figure / baseline per round, median` : '';
  return `${runHeading(run)}\n${renderTable(header, run.figures.map((f) => figureRow(f, withBaseline)))}${note}`;
}

/** A series for one workload: each headline figure's median at every point, in the order given. */
export function seriesTable(key: string, runs: readonly WorkloadRun[]): string {
  const measured = runs.filter((run) => !run.error);
  const names: Array<{ name: string; unit: string }> = [];
  for (const run of measured) {
    for (const f of run.figures.filter(isHeadline)) if (!names.some((n) => n.name === f.name)) names.push({ name: f.name, unit: f.unit });
  }
  const rows = names.map(({ name, unit }) => [name, unit, ...runs.map((run) => {
    const f = run.figures.find((candidate) => candidate.name === name);
    return f ? formatNumber(f.median) : run.error ? 'failed' : '';
  })]);
  const workload = runs[0]?.workload ?? '';
  return `${workload}: scaling over ${key} (medians)\n${renderTable(['figure', 'unit', ...runs.map((run) => run.point?.value ?? '')], rows)}`;
}
