/**
 * The report's charts as inline SVG strings, drawn by hand so the page needs nothing from outside:
 * horizontal bars with min–max whiskers (and an optional baseline bar under each), and line charts
 * with a min–max band (scaling curves, history).
 */
import { formatNumber, formatRatio } from '../table.js';

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export const PALETTE = ['#2563eb', '#db2777', '#059669', '#d97706', '#7c3aed', '#0891b2', '#dc2626', '#4b5563'];
const BASELINE_COLOR = '#9ca3af';
const FONT = 'font-family="system-ui, sans-serif" font-size="12"';

export interface Bar {
  readonly label: string;
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly color?: string;
  readonly baseline?: { readonly name: string; readonly median: number; readonly min: number; readonly max: number };
  readonly ratio?: number;
  /** Which way is better, shown beside the ratio. */
  readonly better?: 'higher' | 'lower';
}

/** A round upper bound for an axis: 1, 2 or 5 times a power of ten, at least `value`. */
export function niceCeiling(value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 5, 10].find((step) => step * power >= value) ?? 10) * power;
}

function text(x: number, y: number, content: string, attrs = ''): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${FONT} ${attrs}>${escapeXml(content)}</text>`;
}

function whisker(x1: number, x2: number, y: number): string {
  return `<path d="M${x1.toFixed(1)} ${y - 4}v8M${x1.toFixed(1)} ${y}H${x2.toFixed(1)}M${x2.toFixed(1)} ${y - 4}v8" stroke="#111827" stroke-width="1" fill="none"/>`;
}

/** One bar per row, scaled to a shared axis from 0; each row may carry its baseline as a thinner grey bar. */
export function barChart(bars: readonly Bar[], unit: string, title: string): string {
  const labelWidth = 300;
  const plotWidth = 420;
  const ratioWidth = 110;
  const rowHeight = (bar: Bar) => (bar.baseline ? 40 : 24);
  const height = 34 + bars.reduce((sum, bar) => sum + rowHeight(bar), 0) + 24;
  const top = Math.max(...bars.flatMap((b) => [b.max, b.median, b.baseline?.max ?? 0, b.baseline?.median ?? 0]).filter(Number.isFinite), 0);
  const axisMax = niceCeiling(top);
  const scale = (v: number) => labelWidth + (Math.max(0, v) / axisMax) * plotWidth;
  const parts: string[] = [text(0, 16, title, 'font-weight="600"')];
  for (let i = 0; i <= 4; i += 1) {
    const x = labelWidth + (plotWidth * i) / 4;
    parts.push(`<line x1="${x}" y1="26" x2="${x}" y2="${height - 20}" stroke="#e5e7eb"/>`, text(x, height - 6, formatNumber((axisMax * i) / 4), 'text-anchor="middle" fill="#6b7280"'));
  }
  let y = 34;
  bars.forEach((bar, index) => {
    const color = bar.color ?? PALETTE[index % PALETTE.length]!;
    const label = bar.label.length > 42 ? `${bar.label.slice(0, 41)}…` : bar.label;
    parts.push(`<g><title>${escapeXml(`${bar.label}: median ${formatNumber(bar.median)} ${unit} (min ${formatNumber(bar.min)}, max ${formatNumber(bar.max)})`)}</title>`);
    parts.push(text(labelWidth - 8, y + 12, label, 'text-anchor="end"'));
    if (Number.isFinite(bar.median)) {
      parts.push(`<rect x="${labelWidth}" y="${y + 2}" width="${(scale(bar.median) - labelWidth).toFixed(1)}" height="14" fill="${color}" rx="2"/>`);
      if (bar.max > bar.min) parts.push(whisker(scale(bar.min), scale(bar.max), y + 9));
      parts.push(text(scale(Math.max(bar.median, bar.max)) + 4, y + 13, formatNumber(bar.median), 'fill="#111827"'));
    }
    parts.push('</g>');
    if (bar.baseline) {
      const b = bar.baseline;
      parts.push(`<g><title>${escapeXml(`${b.name}: median ${formatNumber(b.median)} ${unit}`)}</title>`);
      parts.push(`<rect x="${labelWidth}" y="${y + 20}" width="${(scale(b.median) - labelWidth).toFixed(1)}" height="10" fill="${BASELINE_COLOR}" rx="2"/>`);
      if (b.max > b.min) parts.push(whisker(scale(b.min), scale(b.max), y + 25));
      parts.push(text(labelWidth - 8, y + 30, b.name, 'text-anchor="end" fill="#6b7280" font-size="11"'));
      parts.push('</g>');
    }
    if (bar.ratio !== undefined) {
      const good = bar.better === undefined ? null : bar.better === 'higher' ? bar.ratio >= 1 : bar.ratio <= 1;
      const fill = good === null ? '#374151' : good ? '#047857' : '#b91c1c';
      parts.push(text(labelWidth + plotWidth + ratioWidth - 4, y + 13, `${formatRatio(bar.ratio)} baseline`, `text-anchor="end" font-weight="600" fill="${fill}"`));
    }
    y += rowHeight(bar);
  });
  const width = labelWidth + plotWidth + ratioWidth;
  return `<svg class="chart" role="img" aria-label="${escapeXml(title)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">${parts.join('')}</svg>`;
}

export interface Line {
  readonly name: string;
  /** One point per x label; NaN leaves a gap. */
  readonly points: ReadonlyArray<{ readonly median: number; readonly min: number; readonly max: number }>;
  readonly dashed?: boolean;
  readonly color?: string;
}

/** A line per series over categorical x values (series points, or runs in time), with a min–max band. */
export function lineChart(xLabels: readonly string[], lines: readonly Line[], unit: string, title: string, xTitle: string): string {
  const width = 420;
  const height = 270;
  const left = 64;
  // Room for half of the last x label, which is centred on the right edge of the plot.
  const right = 40;
  const top = 42;
  const bottom = 58;
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const values = lines.flatMap((line) => line.points.flatMap((p) => [p.max, p.median])).filter(Number.isFinite);
  const axisMax = niceCeiling(Math.max(0, ...values));
  const x = (i: number) => left + (xLabels.length === 1 ? plotWidth / 2 : (plotWidth * i) / (xLabels.length - 1));
  const y = (v: number) => top + plotHeight - (Math.max(0, v) / axisMax) * plotHeight;
  const parts: string[] = [text(0, 16, title, 'font-weight="600"')];
  for (let i = 0; i <= 4; i += 1) {
    const v = (axisMax * i) / 4;
    parts.push(`<line x1="${left}" y1="${y(v).toFixed(1)}" x2="${width - right}" y2="${y(v).toFixed(1)}" stroke="#e5e7eb"/>`, text(left - 6, y(v) + 4, formatNumber(v), 'text-anchor="end" fill="#6b7280"'));
  }
  xLabels.forEach((label, i) => parts.push(text(x(i), top + plotHeight + 16, label.length > 18 ? `${label.slice(0, 17)}…` : label, 'text-anchor="middle" fill="#374151"')));
  parts.push(text(left + plotWidth / 2, height - 24, xTitle, 'text-anchor="middle" fill="#6b7280"'));
  parts.push(text(4, top - 12, unit, 'fill="#6b7280"'));
  lines.forEach((line, index) => {
    const color = line.color ?? PALETTE[index % PALETTE.length]!;
    const finite = line.points.map((p, i) => ({ ...p, i })).filter((p) => Number.isFinite(p.median));
    if (finite.length === 0) return;
    if (finite.length > 1) {
      const upper = finite.map((p) => `${x(p.i).toFixed(1)},${y(p.max).toFixed(1)}`);
      const lower = finite.map((p) => `${x(p.i).toFixed(1)},${y(p.min).toFixed(1)}`).reverse();
      parts.push(`<polygon points="${[...upper, ...lower].join(' ')}" fill="${color}" fill-opacity="0.12"/>`);
      parts.push(`<polyline points="${finite.map((p) => `${x(p.i).toFixed(1)},${y(p.median).toFixed(1)}`).join(' ')}" fill="none" stroke="${color}" stroke-width="2"${line.dashed ? ' stroke-dasharray="5 4"' : ''}/>`);
    }
    for (const p of finite) {
      parts.push(`<circle cx="${x(p.i).toFixed(1)}" cy="${y(p.median).toFixed(1)}" r="3.5" fill="${color}"><title>${escapeXml(`${line.name} @ ${xLabels[p.i]}: ${formatNumber(p.median)} ${unit} (min ${formatNumber(p.min)}, max ${formatNumber(p.max)})`)}</title></circle>`);
    }
  });
  const legendY = height - 8;
  let legendX = left;
  lines.forEach((line, index) => {
    const color = line.color ?? PALETTE[index % PALETTE.length]!;
    const name = line.name.length > 28 ? `${line.name.slice(0, 27)}…` : line.name;
    parts.push(`<rect x="${legendX}" y="${legendY - 9}" width="10" height="10" fill="${color}"/>`, text(legendX + 14, legendY, name, 'fill="#374151" font-size="11"'));
    legendX += 24 + name.length * 6;
  });
  return `<svg class="chart" role="img" aria-label="${escapeXml(title)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">${parts.join('')}</svg>`;
}
