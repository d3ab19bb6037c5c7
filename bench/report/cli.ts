/**
 * `npm run bench:report -- [file.json… | dir…] [--out FILE]`: turns bench result files (default: every
 * `bench-*.json` in bench/results) into one self-contained HTML page (default: bench/results/report.html).
 */
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readResultFile, ResultFileError, type BenchResult } from '../result-file.js';
import { renderReport } from './html.js';

/** A file named on the command line must be a result file; in a folder, other versions' files are skipped with a note. */
function readInputs(inputs: readonly string[]): BenchResult[] {
  return inputs.flatMap((input) => {
    if (!statSync(input, { throwIfNoEntry: false })) throw new Error(`${input}: no such file or directory`);
    if (!statSync(input).isDirectory()) return [readResultFile(input)];
    const names = readdirSync(input).filter((name) => name.startsWith('bench-') && name.endsWith('.json')).sort();
    return names.flatMap((name) => {
      try {
        return [readResultFile(join(input, name))];
      } catch (error) {
        if (!(error instanceof ResultFileError)) throw error;
        process.stderr.write(`bench:report: skipping ${error.message}\n`);
        return [];
      }
    });
  });
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: 'string', default: 'bench/results/report.html' } } });
  const results = readInputs(positionals.length > 0 ? positionals : ['bench/results']);
  if (results.length === 0) throw new Error('no result files (bench-*.json) found: run `npm run bench` first');
  writeFileSync(values.out, renderReport(results, new Date().toISOString()));
  process.stdout.write(`report: ${values.out} (${results.length} result file(s))\n`);
}

try {
  main();
} catch (error) {
  process.stderr.write(`bench:report: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
