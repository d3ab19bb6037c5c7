/**
 * `npm run bench -- <workload…> [--duration S] [--rounds N] [--connections N] [--smoke] [--list]
 * [--out DIR] [--set mailbox_capacity=N]`: runs workloads, prints a table, and writes a JSON result
 * file with the machine, the options and every figure (min/median/max over rounds).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { findWorkload, WORKLOADS } from './workloads/index.js';
import type { Figure, WorkloadOptions } from './workload.js';

function format(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  return value.toPrecision(3);
}

function table(workload: string, figures: readonly Figure[]): string {
  const rows = figures.map((f) => [workload, f.name, f.unit, format(f.min), format(f.median), format(f.max)]);
  const header = ['workload', 'figure', 'unit', 'min', 'median', 'max'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      duration: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' }, smoke: { type: 'boolean', default: false },
      list: { type: 'boolean', default: false }, out: { type: 'string', default: 'bench/results' }, set: { type: 'string', multiple: true },
      connections: { type: 'string', default: '50' },
    },
  });
  if (values.list) {
    for (const w of WORKLOADS) process.stdout.write(`${w.name.padEnd(10)} ${w.description}\n`);
    return;
  }
  const sets = Object.fromEntries((values.set ?? []).map((s) => s.split('=') as [string, string]));
  const options: WorkloadOptions = {
    durationSeconds: values.smoke ? 1 : Number(values.duration),
    rounds: values.smoke ? 1 : Number(values.rounds),
    smoke: values.smoke ?? false,
    mailboxCapacity: Number(sets.mailbox_capacity ?? 1024),
    connections: Number(values.connections),
  };
  const chosen = positionals.length === 0 ? WORKLOADS : positionals.map((name) => {
    const workload = findWorkload(name);
    if (!workload) throw new Error(`unknown workload '${name}' (see --list)`);
    return workload;
  });
  const results: Record<string, Figure[]> = {};
  for (const workload of chosen) {
    results[workload.name] = await workload.run(options);
    process.stdout.write(`${table(workload.name, results[workload.name]!)}\n\n`);
  }
  const machine = { cores: availableParallelism(), cpu: cpus()[0]?.model ?? 'unknown', memoryBytes: totalmem(), node: process.version };
  mkdirSync(values.out!, { recursive: true });
  const file = join(values.out!, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ machine, options, results }, null, 2));
  process.stdout.write(`results: ${file}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${(error as Error).message}\n`);
  process.exitCode = 1;
});
