/**
 * `npm test`: runs every compiled test file with node:test (Node 20 has no glob support, and a
 * run that finds nothing exits 0), prints the spec reporter's output, and fails when any test
 * failed or when no test ran at all.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const testRoot = fileURLToPath(new URL('.', import.meta.url));
const filter = process.argv.slice(2);

function findTests(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return findTests(path);
    return entry.name.endsWith('.test.js') ? [path] : [];
  });
}

const files = findTests(testRoot).filter((file) => filter.length === 0 || filter.some((f) => relative(testRoot, file).includes(f))).sort();
if (files.length === 0) {
  process.stderr.write('no test files found\n');
  process.exit(1);
}

// Node 20 applies --test-timeout to each test file as a whole (its subprocess): the slowest files
// (bench --smoke, the kill -9 consumer loop) take about 230 s beside one busy loop on this 2-core
// machine, so the bound that catches a hang is 15 minutes, not 5.
// A second reporter writes each file's time to a scratch file; the slowest are printed at the end, so the
// suite's 15-minute budget has names attached.
const timesDir = mkdtempSync(join(tmpdir(), 'cdn-test-times-'));
const timesFile = join(timesDir, 'files.tsv');
const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${join(testRoot, 'file-times-reporter.js')}`, `--test-reporter-destination=${timesFile}`];
// Node 20 runs `availableParallelism() - 1` test files at once unless told: one at a time on the 2-core machine,
// with a core idle whenever a file waits on a node. One file per core keeps both busy.
const concurrency = `--test-concurrency=${availableParallelism()}`;
const child = spawn(process.execPath, ['--test', concurrency, ...reporters, '--test-timeout=900000', ...files], { stdio: ['ignore', 'pipe', 'inherit'] });
/** The reporter's closing counters (`ℹ tests N`, `ℹ fail N`), from wherever they appear in the output. */
const counters = new Map<string, number>();
let pending = '';
child.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  const lines = (pending + chunk.toString('utf8')).split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    const match = /^ℹ (tests|fail) (\d+)$/.exec(line.trim());
    if (match) counters.set(match[1]!, Number(match[2]));
  }
});
// 'close' (stdout drained), not 'exit': the closing counters are the last lines the reporter writes.
child.on('close', (code) => {
  printSlowestFiles();
  const tests = counters.get('tests') ?? NaN;
  const failed = counters.get('fail') ?? NaN;
  if (!(tests > 0)) {
    process.stderr.write('no test ran: failing the run\n');
    process.exit(1);
  }
  process.exit(code === 0 && failed === 0 ? 0 : 1);
});

function printSlowestFiles(): void {
  try {
    const lines = readFileSync(timesFile, 'utf8').split('\n').filter((line) => line !== '');
    if (lines.length > 0) {
      process.stdout.write(`ℹ slowest test files (seconds):\n${lines.slice(0, 15).map((line) => {
        const [seconds, file] = line.split('\t');
        return `ℹ   ${seconds!.padStart(6)}  ${relative(testRoot, file!)}`;
      }).join('\n')}\n`);
    }
  } catch {
    // No times (the run ended before the reporter wrote any): nothing to print.
  } finally {
    rmSync(timesDir, { recursive: true, force: true });
  }
}
