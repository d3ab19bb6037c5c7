/**
 * Building figures from per-round measurements: a plain figure, and one compared against a baseline
 * measured in the same run (its values and the per-round ratio carried on the figure itself).
 */
import { summarize } from './stats.js';
import type { Figure } from './workload.js';

export function figure(name: string, unit: string, values: readonly number[], better?: Figure['better']): Figure {
  return { name, unit, ...summarize(values), ...(better ? { better } : {}) };
}

/**
 * `values[i]` and `baselineValues[i]` come from the same round; the ratio is taken round by round, so a
 * machine that slowed down for one round slows both sides of that round's ratio.
 */
export function compared(
  name: string,
  unit: string,
  values: readonly number[],
  baseline: { readonly name: string; readonly values: readonly number[] },
  better?: Figure['better'],
): Figure {
  if (baseline.values.length !== values.length) throw new Error(`${name}: ${values.length} rounds but ${baseline.values.length} baseline rounds`);
  const ratios = values.map((value, i) => value / baseline.values[i]!);
  return {
    ...figure(name, unit, values, better),
    baseline: { name: baseline.name, ...summarize(baseline.values) },
    // A zero on the baseline's side (no disconnects, say) has no ratio.
    ...(ratios.every(Number.isFinite) ? { ratio: summarize(ratios) } : {}),
  };
}
