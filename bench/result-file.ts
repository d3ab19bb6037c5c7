/**
 * The JSON file every bench run writes (one per run, under `--out`), and reading it back for
 * `npm run bench:report`.
 */
import { readFileSync } from 'node:fs';
import type { Machine } from './machine.js';
import type { Figure } from './workload.js';

export const RESULT_FORMAT = 'chain-data-node-bench/1';

/** One workload at one series point. */
export interface WorkloadRun {
  readonly workload: string;
  readonly description: string;
  /** The series point this run measured (`--series key=…`); null outside a series. */
  readonly point: { readonly key: string; readonly value: string } | null;
  readonly startedAt: string;
  readonly seconds: number;
  readonly figures: Figure[];
  /** Set when the workload failed; its figures are then empty. */
  readonly error?: string;
}

export interface BenchResult {
  readonly format: typeof RESULT_FORMAT;
  /** The command line that produced the file, as a user would type it. */
  readonly command: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: Machine;
  readonly options: { readonly durationSeconds: number; readonly rounds: number; readonly connections: number; readonly smoke: boolean };
  readonly config: {
    /** The `--config` file; null: the schema's defaults. */
    readonly file: string | null;
    readonly sets: readonly string[];
    /** The validated configuration (file + `--set`, before any series point), secrets masked. */
    readonly effective: Record<string, unknown>;
  };
  readonly series: { readonly key: string; readonly values: readonly string[] } | null;
  readonly runs: WorkloadRun[];
}

export class ResultFileError extends Error {
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`);
    this.name = 'ResultFileError';
  }
}

function isFigure(value: unknown): value is Figure {
  const f = value as Partial<Figure> | null;
  return typeof f === 'object' && f !== null && typeof f.name === 'string' && typeof f.unit === 'string'
    && [f.min, f.median, f.max].every((n) => typeof n === 'number' || n === null);
}

/** JSON has no NaN: a figure that could not be measured is written as null and read back as NaN. */
function revive(figures: readonly Figure[]): Figure[] {
  const fix = <T extends { min: number; median: number; max: number }>(s: T): T => ({ ...s, min: s.min ?? NaN, median: s.median ?? NaN, max: s.max ?? NaN });
  return figures.map((f) => ({ ...fix(f), ...(f.baseline ? { baseline: fix(f.baseline) } : {}), ...(f.ratio ? { ratio: fix(f.ratio) } : {}) }));
}

export function readResultFile(file: string): BenchResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ResultFileError(file, `not a readable JSON file (${(error as Error).message})`);
  }
  const result = parsed as BenchResult;
  if (result?.format !== RESULT_FORMAT || !Array.isArray(result.runs) || typeof result.machine !== 'object') {
    throw new ResultFileError(file, `not a bench result file of this version (expected "format": "${RESULT_FORMAT}")`);
  }
  for (const run of result.runs) {
    if (typeof run.workload !== 'string' || !Array.isArray(run.figures) || !run.figures.every(isFigure)) {
      throw new ResultFileError(file, `run '${String(run.workload)}' has malformed figures`);
    }
  }
  return { ...result, runs: result.runs.map((run) => ({ ...run, figures: revive(run.figures) })) };
}
