/**
 * Bench result files → one self-contained HTML page (inline CSS and SVG, no script, nothing fetched):
 * a summary of the latest figure per workload, a history across runs, and per run its machine,
 * configuration and, per workload, throughput, latency percentiles, time per unit of work, scaling
 * curves over a series, and every figure in a table.
 */
import { betterOf, isDuration, isHeadline, isThroughput, percentileOf } from '../figure-kinds.js';
import type { BenchResult, WorkloadRun } from '../result-file.js';
import { formatNumber, formatRatio } from '../table.js';
import type { Figure } from '../workload.js';
import { barChart, escapeXml as esc, lineChart, PALETTE, type Bar, type Line } from './svg.js';

const STYLE = `
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:24px;color:#111827;background:#fff}
h1{margin:0 0 4px}h2{margin-top:40px;border-bottom:2px solid #e5e7eb;padding-bottom:4px}h3{margin-top:28px}
h4{margin:18px 0 6px;color:#374151}
table{border-collapse:collapse;font-size:13px;margin:8px 0}th,td{padding:3px 8px;border-bottom:1px solid #e5e7eb;text-align:right}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}th{background:#f9fafb}
.muted{color:#6b7280}.charts{display:flex;flex-wrap:wrap;gap:16px}.chart{max-width:100%;height:auto}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;font-size:13px}dt{color:#6b7280}dd{margin:0}
code,pre{font-family:ui-monospace,monospace;font-size:12px}pre{background:#f9fafb;padding:8px;overflow:auto;max-height:400px}
.good{color:#047857;font-weight:600}.bad{color:#b91c1c;font-weight:600}.failed{color:#b91c1c}
nav a{margin-right:12px}td.run-link{white-space:nowrap}`;

const byUnit = (figures: readonly Figure[]) => {
  const groups = new Map<string, Figure[]>();
  for (const f of figures) groups.set(f.unit, [...(groups.get(f.unit) ?? []), f]);
  return [...groups.entries()];
};

function bar(f: Figure, color?: string): Bar {
  return {
    label: f.name, median: f.median, min: f.min, max: f.max, ...(color ? { color } : {}),
    ...(f.baseline ? { baseline: f.baseline } : {}), ...(f.ratio ? { ratio: f.ratio.median } : {}),
    ...(betterOf(f) ? { better: betterOf(f)! } : {}),
  };
}

function ratioCell(f: Figure): string {
  if (!f.ratio) return '<td></td>';
  const better = betterOf(f);
  const good = better === undefined ? null : better === 'higher' ? f.ratio.median >= 1 : f.ratio.median <= 1;
  return `<td class="${good === null ? '' : good ? 'good' : 'bad'}">${formatRatio(f.ratio.median)}</td>`;
}

function figureTable(figures: readonly Figure[]): string {
  const rows = figures.map((f) => `<tr><td>${esc(f.name)}</td><td>${esc(f.unit)}</td><td>${formatNumber(f.min)}</td><td>${formatNumber(f.median)}</td><td>${formatNumber(f.max)}</td>`
    + `<td>${f.baseline ? formatNumber(f.baseline.median) : ''}</td>${ratioCell(f)}</tr>`);
  return `<table class="figures"><thead><tr><th>figure</th><th>unit</th><th>min</th><th>median</th><th>max</th><th>baseline</th><th>ratio</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function percentileColor(f: Figure): string {
  const rank = percentileOf(f)?.rank ?? 0;
  return rank >= 100 ? PALETTE[6]! : rank >= 99 ? PALETTE[3]! : rank >= 90 ? PALETTE[1]! : PALETTE[0]!;
}

function chartsSection(className: string, title: string, charts: readonly string[]): string {
  return charts.length === 0 ? '' : `<div class="${className}"><h4>${esc(title)}</h4><div class="charts">${charts.join('')}</div></div>`;
}

/** The charts of one workload run. */
function workloadCharts(run: WorkloadRun): string {
  const throughput = run.figures.filter(isThroughput);
  const percentiles = run.figures.filter((f) => percentileOf(f) !== null);
  const perUnitOfWork = run.figures.filter((f) => isDuration(f) && percentileOf(f) === null);
  const baselines = [...new Set(run.figures.flatMap((f) => (f.baseline ? [f.baseline.name] : [])))];
  return [
    chartsSection('section-throughput', 'Throughput', byUnit(throughput).map(([unit, fs]) => barChart(fs.map((f) => bar(f)), unit, `throughput (${unit})`))),
    chartsSection('section-latency', 'Latency percentiles', byUnit(percentiles).map(([unit, fs]) => barChart(fs.map((f) => bar(f, percentileColor(f))), unit, `latency (${unit})`))),
    chartsSection('section-durations', 'Time per unit of work', byUnit(perUnitOfWork).map(([unit, fs]) => barChart(fs.map((f) => bar(f)), unit, unit))),
    baselines.length > 0 ? `<p class="muted">Grey bars: ${esc(baselines.join(', '))}, measured in the same run; ratios are this / baseline per round (median), green where the node is better.</p>` : '',
  ].join('');
}

function runFailed(run: WorkloadRun): string {
  return `<p class="failed">Failed: ${esc(run.error ?? '')}</p>`;
}

function workloadArticle(run: WorkloadRun, anchor: string): string {
  const body = run.error ? runFailed(run) : `${workloadCharts(run)}<details><summary>all ${run.figures.length} figures</summary>${figureTable(run.figures)}</details>`;
  return `<article class="workload" id="${anchor}"><h3>${esc(run.workload)}</h3><p class="muted">${esc(run.description)} — ${run.seconds.toFixed(1)} s</p>${body}</article>`;
}

/** One chart per headline figure: its median over the series points, with its baseline's when it has one. */
function scalingArticle(key: string, values: readonly string[], runs: readonly WorkloadRun[], anchor: string): string {
  const names: Figure[] = [];
  for (const run of runs) for (const f of run.figures) if (isHeadline(f) && !names.some((n) => n.name === f.name)) names.push(f);
  const charts = names.filter((f) => isThroughput(f) || percentileOf(f) !== null || f.ratio !== undefined).map((first) => {
    const at = (run: WorkloadRun) => run.figures.find((f) => f.name === first.name);
    const gap = { median: NaN, min: NaN, max: NaN };
    const lines: Line[] = [{ name: 'node', points: values.map((_, i) => at(runs[i]!) ?? gap) }];
    if (first.baseline) lines.push({ name: first.baseline.name, dashed: true, color: '#9ca3af', points: values.map((_, i) => at(runs[i]!)?.baseline ?? gap) });
    return lineChart(values, lines, first.unit, first.name, key);
  });
  const tables = runs.map((run) => `<details><summary>${esc(key)} = ${esc(run.point?.value ?? '')}</summary>${run.error ? runFailed(run) : figureTable(run.figures)}</details>`);
  return `<article class="workload" id="${anchor}"><h3>${esc(runs[0]?.workload ?? '')}: scaling over <code>${esc(key)}</code></h3>`
    + `<p class="muted">${esc(runs[0]?.description ?? '')}</p><div class="section-scaling"><h4>Scaling curves (median, band: min–max over rounds)</h4>`
    + `<div class="charts">${charts.join('')}</div></div>${tables.join('')}</article>`;
}

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

function runSection(result: BenchResult, index: number): string {
  const m = result.machine;
  const details: Array<[string, string]> = [
    ['command', `<code>${esc(result.command)}</code>`],
    ['started', esc(result.startedAt)],
    ['machine', esc(`${m.cores} cores (${m.logicalCpus} logical CPUs), ${m.cpuModel}${m.cpuMHz ? ` @ ${m.cpuMHz} MHz` : ''}, ${gib(m.memoryBytes)} memory`)],
    ['load average at start', esc(formatNumber(m.loadAverageAtStart))],
    ['Node.js', esc(`${m.node} (V8 ${m.v8}), ${m.platform}/${m.arch}, kernel ${m.kernel}`)],
    ['options', esc(`${result.options.durationSeconds} s per measurement, ${result.options.rounds} round(s), ${result.options.connections} connections${result.options.smoke ? ', smoke' : ''}`)],
    ['config', esc(`${result.config.file ?? '(schema defaults)'}${result.config.sets.length > 0 ? ` with --set ${result.config.sets.join(' ')}` : ''}`)],
  ];
  if (result.series) details.push(['series', esc(`${result.series.key} = ${result.series.values.join(', ')}`)]);
  const articles: string[] = [];
  const workloads = [...new Set(result.runs.map((r) => r.workload))];
  for (const workload of workloads) {
    const runs = result.runs.filter((r) => r.workload === workload);
    const anchor = `run-${index}-${workload}`;
    if (result.series) articles.push(scalingArticle(result.series.key, result.series.values, runs, anchor));
    else articles.push(...runs.map((run) => workloadArticle(run, anchor)));
  }
  return `<section class="run" id="run-${index}"><h2>Run ${esc(result.startedAt)}</h2><dl>${details.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl>`
    + `<details><summary>effective configuration</summary><pre>${esc(JSON.stringify(result.config.effective, null, 2))}</pre></details>${articles.join('')}</section>`;
}

/** The newest measured run of each workload outside any series, for the summary table. */
function latestRuns(results: readonly BenchResult[]): Array<{ run: WorkloadRun; result: BenchResult; anchor: string }> {
  const latest = new Map<string, { run: WorkloadRun; result: BenchResult; anchor: string }>();
  results.forEach((result, index) => {
    if (result.series) return;
    // Run sections are numbered newest first.
    const anchor = `#run-${results.length - 1 - index}`;
    for (const run of result.runs) if (!run.error) latest.set(run.workload, { run, result, anchor });
  });
  return [...latest.values()];
}

/** A run's start as a short label (month-day hour:minute, UTC). */
const shortTime = (startedAt: string) => startedAt.slice(5, 16).replace('T', ' ');

function summarySection(results: readonly BenchResult[]): string {
  const rows = latestRuns(results).flatMap(({ run, result, anchor }) => run.figures.filter((f) => isThroughput(f) || percentileOf(f) !== null || f.ratio !== undefined)
    .map((f) => `<tr><td>${esc(run.workload)}</td><td>${esc(f.name)}</td><td>${formatNumber(f.median)}</td><td>${esc(f.unit)}</td>`
      + `<td>${f.baseline ? formatNumber(f.baseline.median) : ''}</td>${ratioCell(f)}<td class="run-link"><a href="${anchor}" title="${esc(result.startedAt)}">${esc(shortTime(result.startedAt))}</a></td></tr>`));
  if (rows.length === 0) return '<section id="summary"><h2>Latest figures</h2><p class="muted">No run outside a series yet: see the scaling curves below.</p></section>';
  return `<section id="summary"><h2>Latest figures</h2><p class="muted">The newest run of each workload: medians over rounds; ratio = node / baseline in the same run.</p>`
    + `<table><thead><tr><th>workload</th><th>figure</th><th>median</th><th>unit</th><th>baseline</th><th>ratio</th><th>run</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`;
}

/** Each throughput figure over the runs that measured it (outside series), when at least two did. */
function historySection(results: readonly BenchResult[]): string {
  const plain = results.filter((r) => !r.series);
  if (plain.length < 2) return '';
  const keys = new Map<string, { workload: string; figure: Figure }>();
  for (const result of plain) for (const run of result.runs) for (const f of run.figures.filter(isThroughput)) keys.set(`${run.workload}\u0000${f.name}`, { workload: run.workload, figure: f });
  const labels = plain.map((r) => shortTime(r.startedAt));
  const charts = [...keys.values()].map(({ workload, figure }) => {
    const points = plain.map((result) => result.runs.find((r) => r.workload === workload)?.figures.find((f) => f.name === figure.name) ?? { median: NaN, min: NaN, max: NaN });
    return { points, chart: lineChart(labels, [{ name: 'median', points }], figure.unit, `${workload}: ${figure.name}`, 'run') };
  }).filter(({ points }) => points.filter((p) => Number.isFinite(p.median)).length >= 2);
  return charts.length === 0 ? '' : `<section id="history"><h2>History</h2><div class="charts">${charts.map((c) => c.chart).join('')}</div></section>`;
}

export function renderReport(results: readonly BenchResult[], generatedAt: string): string {
  const sorted = [...results].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const newestFirst = [...sorted].reverse();
  const nav = newestFirst.map((r, i) => `<a href="#run-${i}">${esc(r.startedAt.slice(0, 16).replace('T', ' '))}${r.series ? ` (series ${esc(r.series.key)})` : ''}</a>`).join('');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Chain Data Node — bench report</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>Chain Data Node — bench report</h1><p class="muted">Generated ${esc(generatedAt)} from ${results.length} result file(s). Figures are medians over rounds with min–max whiskers.</p><nav>${nav}</nav></header>
${summarySection(sorted)}
${historySection(sorted)}
${newestFirst.map((r, i) => runSection(r, i)).join('\n')}
</body>
</html>
`;
}
