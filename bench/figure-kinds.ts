/**
 * How the table and the HTML report group figures: a throughput is anything per second, a latency
 * any time unit, and which way is better is the figure's own `better` or, absent, read from its unit.
 */
import type { Figure } from './workload.js';

const TIME_UNITS = new Set(['ms', 'µs', 'us', 's', 'ns']);

export function isThroughput(figure: Figure): boolean {
  return figure.unit.endsWith('/s');
}

/** A latency or duration (`ms`, `µs`, `ms/block`, …). */
export function isDuration(figure: Figure): boolean {
  return TIME_UNITS.has(figure.unit) || /^(worker )?(ms|µs)\/\w+$/.test(figure.unit);
}

/** A latency percentile (`p50`, `p99`, `max`): the report draws these as distributions. */
export function percentileOf(figure: Figure): { label: string; rank: number } | null {
  if (!TIME_UNITS.has(figure.unit)) return null;
  const match = /\b(p(\d+(?:\.\d+)?)|max)\b/.exec(figure.name);
  if (!match) return null;
  return match[1] === 'max' ? { label: 'max', rank: 100 } : { label: match[1]!, rank: Number(match[2]) };
}

export function betterOf(figure: Figure): 'higher' | 'lower' | undefined {
  if (figure.better) return figure.better;
  if (isThroughput(figure)) return 'higher';
  if (isDuration(figure)) return 'lower';
  return undefined;
}

/** Figures worth a scaling curve: throughputs, durations and figures compared against a baseline. */
export function isHeadline(figure: Figure): boolean {
  return isThroughput(figure) || isDuration(figure) || figure.ratio !== undefined || figure.better !== undefined;
}
