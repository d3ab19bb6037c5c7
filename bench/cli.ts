/**
 * `npm run bench -- <workload…> [--duration S] [--rounds N] [--connections N] [--config FILE]
 * [--set key=value…] [--series key=v1,v2,…] [--out DIR] [--smoke] [--list]`: runs workloads (each
 * once per series point), prints a table per run and per series, and writes one JSON result file
 * with the machine, the options, the effective config and every figure (min/median/max over rounds).
 * Exit codes: 0 all workloads measured, 1 a workload failed (the others still run and are written),
 * 2 usage or configuration error.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { leftoverCount, removeLeftovers } from './leftovers.js';
import { describeMachine } from './machine.js';
import { setBenchNodeBase } from './node.js';
import { RESULT_FORMAT, type BenchResult, type WorkloadRun } from './result-file.js';
import { BenchUsageError, parseCommand, USAGE, type RunPlan, type SeriesPoint } from './run-plan.js';
import { runTable, seriesTable } from './table.js';
import { WORKLOADS } from './workloads/index.js';
import type { Workload, WorkloadOptions } from './workload.js';

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

async function runOne(workload: Workload, plan: RunPlan, point: SeriesPoint | null): Promise<WorkloadRun> {
  const loaded = point?.loaded ?? plan.loaded;
  setBenchNodeBase({ configFile: plan.configFile, sets: [...plan.sets, ...(point?.sets ?? [])] });
  const options: WorkloadOptions = {
    durationSeconds: plan.durationSeconds,
    rounds: plan.rounds,
    smoke: plan.smoke,
    connections: point?.connections ?? plan.connections,
    mailboxCapacity: loaded.config.actors.chain.mailbox_capacity,
    config: loaded.config,
  };
  const startedAt = new Date().toISOString();
  const started = performance.now();
  const base = { workload: workload.name, description: workload.description, point: point ? { key: point.key, value: point.value } : null, startedAt };
  try {
    const figures = await workload.run(options);
    return { ...base, seconds: (performance.now() - started) / 1000, figures };
  } catch (error) {
    // The table shows the message; the stack and the cause (undici's "fetch failed" hides the socket error there) go to stderr.
    const cause = (error as Error).cause;
    process.stderr.write(`${workload.name} failed: ${(error as Error).stack ?? String(error)}${cause === undefined ? '' : `\ncaused by: ${(cause as Error).stack ?? String(cause)}`}\n`);
    return { ...base, seconds: (performance.now() - started) / 1000, figures: [], error: (error as Error).message };
  } finally {
    const left = leftoverCount();
    if (left.processes + left.directories > 0) {
      process.stderr.write(`bench: ${workload.name} left ${left.processes} process(es) and ${left.directories} directory(ies) behind; removing them\n`);
      removeLeftovers();
    }
  }
}

function resultOf(plan: RunPlan, startedAt: string, argv: readonly string[], runs: WorkloadRun[], machine: BenchResult['machine']): BenchResult {
  return {
    format: RESULT_FORMAT,
    command: ['npm run bench --', ...argv].join(' '),
    startedAt,
    finishedAt: new Date().toISOString(),
    machine,
    options: { durationSeconds: plan.durationSeconds, rounds: plan.rounds, connections: plan.connections, smoke: plan.smoke },
    config: {
      file: plan.configFile,
      sets: plan.sets,
      effective: { ...plan.effectiveConfig, data_dir: '(a temporary directory per node)', listeners: '(free loopback ports per node)' },
    },
    series: plan.series ? { key: plan.series.key, values: plan.series.points.map((p) => p.value) } : null,
    runs,
  };
}

async function run(plan: RunPlan, argv: readonly string[]): Promise<number> {
  const machine = describeMachine();
  const startedAt = new Date().toISOString();
  const runs: WorkloadRun[] = [];
  for (const workload of plan.workloads) {
    const points = plan.series?.points ?? [null];
    const series: WorkloadRun[] = [];
    for (const point of points) {
      const result = await runOne(workload, plan, point);
      print(`${runTable(result)}\n`);
      series.push(result);
    }
    if (plan.series) print(`${seriesTable(plan.series.key, series)}\n`);
    runs.push(...series);
  }
  mkdirSync(plan.outDir, { recursive: true });
  const file = join(plan.outDir, `bench-${startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(resultOf(plan, startedAt, argv, runs, machine), null, 2)}\n`);
  print(`results: ${file}`);
  const failed = runs.filter((r) => r.error);
  if (failed.length > 0) process.stderr.write(`bench: ${failed.length} run(s) failed: ${failed.map((r) => r.workload).join(', ')}\n`);
  return failed.length > 0 ? 1 : 0;
}

function stopOnSignal(signal: NodeJS.Signals): void {
  process.once(signal, () => {
    const removed = removeLeftovers();
    process.stderr.write(`bench: ${signal}: stopped ${removed.processes} process(es), removed ${removed.directories} directory(ies)\n`);
    process.exit(130);
  });
}

async function main(argv: readonly string[]): Promise<number> {
  const command = parseCommand(argv);
  if (command.kind === 'help') {
    print(USAGE);
    return 0;
  }
  if (command.kind === 'list') {
    for (const w of WORKLOADS) print(`${w.name.padEnd(10)} ${w.description}`);
    return 0;
  }
  stopOnSignal('SIGINT');
  stopOnSignal('SIGTERM');
  return run(command.plan, argv);
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error: unknown) => {
    const usage = error instanceof BenchUsageError;
    process.stderr.write(`bench: ${(error as Error).message}\n${usage ? '(npm run bench -- --help for the options)\n' : ''}`);
    process.exitCode = usage ? 2 : 1;
  },
);
