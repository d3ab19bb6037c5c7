/**
 * `npm run bench` arguments → a validated plan: which workloads, for how long, on which node
 * configuration (the `--config` file and `--set` overrides, checked by the node's own schema before
 * anything starts), and the series points. Any problem is a `BenchUsageError` naming what to fix.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, describeConfig, loadConfig, type LoadedConfig } from '../actors/node/config.js';
import { findWorkload, WORKLOADS } from './workloads/index.js';
import type { Workload } from './workload.js';

export class BenchUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BenchUsageError';
  }
}

export const USAGE = `npm run bench -- [workload…] [options]      (no workload: all of them)

  --duration S          seconds of load per measurement (default 5)
  --rounds N            repeated measurements per figure: min/median/max over them (default 3)
  --connections N       concurrent connections / streams of the load generators (default 50)
  --config FILE         node TOML used as the base config of every node a workload starts
  --set key=value       override one config key on top of --config (repeatable), e.g.
                        --set actors.listener.instances=2 --set runtime.pool_threads=4
  --series key=v1,v2,…  repeat each workload once per value of a config key (or 'connections')
                        and print the curve, e.g. --series actors.listener.instances=1,2,4
  --out DIR             where the JSON result file goes (default bench/results)
  --smoke               every workload for about a second, one round (the test suite runs this)
  --list                name the workloads and exit

Results: a table on stdout and a JSON file in --out; \`npm run bench:report\` turns result files
into one HTML page.`;

/** Series keys that are options of the harness rather than node configuration keys. */
const HARNESS_SERIES_KEYS = new Set(['connections']);

export interface SeriesPoint {
  readonly key: string;
  readonly value: string;
  /** The config with this point applied (the base config when the key is a harness option). */
  readonly loaded: LoadedConfig;
  /** Overrides of this point, appended to the run's `--set`s. */
  readonly sets: readonly string[];
  readonly connections: number;
}

export interface RunPlan {
  readonly workloads: readonly Workload[];
  readonly durationSeconds: number;
  readonly rounds: number;
  readonly connections: number;
  readonly smoke: boolean;
  readonly outDir: string;
  readonly configFile: string | null;
  readonly sets: readonly string[];
  readonly loaded: LoadedConfig;
  readonly effectiveConfig: Record<string, unknown>;
  readonly series: { readonly key: string; readonly points: readonly SeriesPoint[] } | null;
}

export type ParsedCommand = { readonly kind: 'list' } | { readonly kind: 'help' } | { readonly kind: 'run'; readonly plan: RunPlan };

function positiveNumber(name: string, text: string, integer: boolean): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new BenchUsageError(`--${name} ${JSON.stringify(text)}: expected a positive ${integer ? 'integer' : 'number'}`);
  }
  return value;
}

function load(configFile: string | null, sets: readonly string[], what: string): LoadedConfig {
  try {
    // With no file the schema's defaults apply: an empty TOML document.
    return loadConfig(configFile ?? '/dev/null', sets);
  } catch (error) {
    if (error instanceof ConfigError) throw new BenchUsageError(`${what} is not a valid node configuration:\n${error.message}`);
    throw error;
  }
}

function parseSeries(text: string, configFile: string | null, sets: readonly string[], connections: number): RunPlan['series'] {
  const eq = text.indexOf('=');
  const key = text.slice(0, eq);
  const values = text.slice(eq + 1).split(',').map((v) => v.trim()).filter(Boolean);
  if (eq <= 0 || values.length === 0) throw new BenchUsageError(`--series ${JSON.stringify(text)}: expected key=v1,v2,… (e.g. actors.listener.instances=1,2,4)`);
  if (new Set(values).size !== values.length) throw new BenchUsageError(`--series ${key}: a value is repeated`);
  const points = values.map((value): SeriesPoint => {
    if (HARNESS_SERIES_KEYS.has(key)) {
      return { key, value, loaded: load(configFile, sets, 'the configuration'), sets: [], connections: positiveNumber(key, value, true) };
    }
    const pointSets = [`${key}=${value}`];
    return { key, value, loaded: load(configFile, [...sets, ...pointSets], `--series point ${key}=${value}`), sets: pointSets, connections };
  });
  return { key, points };
}

export function parseCommand(argv: readonly string[]): ParsedCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        duration: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' }, connections: { type: 'string', default: '50' },
        config: { type: 'string' }, set: { type: 'string', multiple: true, default: [] }, series: { type: 'string' },
        out: { type: 'string', default: 'bench/results' }, smoke: { type: 'boolean', default: false }, list: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new BenchUsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  if (values.list) return { kind: 'list' };
  const workloads = positionals.length === 0 ? WORKLOADS : positionals.map((name) => {
    const workload = findWorkload(name);
    if (!workload) throw new BenchUsageError(`unknown workload '${name}'; the workloads are: ${WORKLOADS.map((w) => w.name).join(', ')}`);
    return workload;
  });
  const smoke = values.smoke;
  const connections = positiveNumber('connections', values.connections, true);
  const configFile = values.config === undefined ? null : resolve(values.config);
  const sets = values.set;
  const loaded = load(configFile, sets, configFile ? `--config ${values.config}${sets.length > 0 ? ' with --set' : ''}` : '--set');
  return {
    kind: 'run',
    plan: {
      workloads,
      durationSeconds: smoke ? 1 : positiveNumber('duration', values.duration, false),
      rounds: smoke ? 1 : positiveNumber('rounds', values.rounds, true),
      connections,
      smoke,
      outDir: values.out,
      configFile,
      sets,
      loaded,
      effectiveConfig: describeConfig(loaded),
      series: values.series === undefined ? null : parseSeries(values.series, configFile, sets, connections),
    },
  };
}
