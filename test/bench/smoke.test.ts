/**
 * `npm run bench -- --smoke` end to end, so the harness cannot rot: every registered workload runs for
 * about a second through the real CLI, writes its figures to the result file, stops everything it
 * started, and the report renders from that file. Speeds are never asserted; shapes and counts are.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { INGEST_STAGES } from '../../bench/ingest/stage-clock.js';
import { readResultFile, type BenchResult, type WorkloadRun } from '../../bench/result-file.js';
import type { Figure } from '../../bench/workload.js';
import { WORKLOADS } from '../../bench/workloads/index.js';

const BENCH_CLI = fileURLToPath(new URL('../../bench/cli.js', import.meta.url));
const REPORT_CLI = fileURLToPath(new URL('../../bench/report/cli.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'cdn-bench-smoke-'));
/** The bench's own temporary directory: whatever it leaves there, it left behind. */
const benchTmp = join(dir, 'tmp');
after(() => rmSync(dir, { recursive: true, force: true }));

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runBench(args: readonly string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BENCH_CLI, ...args], { env: { ...process.env, TMPDIR: benchTmp }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function byName(run: WorkloadRun, name: string): Figure {
  const figure = run.figures.find((f) => f.name === name);
  assert.ok(figure, `${run.workload}: figure '${name}' is reported`);
  return figure;
}

function runOf(result: BenchResult, workload: string): WorkloadRun {
  const run = result.runs.find((r) => r.workload === workload);
  assert.ok(run, `${workload} ran`);
  return run;
}

describe('bench --smoke', () => {
  let outcome: Outcome;
  let result: BenchResult;

  before(async () => {
    mkdirSync(benchTmp);
    outcome = await runBench(['--smoke', '--out', join(dir, 'results')]);
    const files = readdirSync(join(dir, 'results'), { withFileTypes: true }).filter((e) => e.name.endsWith('.json'));
    assert.equal(files.length, 1, `one result file (exit ${outcome.code}): ${outcome.stderr.slice(-2000)}`);
    result = readResultFile(join(dir, 'results', files[0]!.name));
  });

  it('every registered workload runs once, without error, and its figures reach the result file and the table', () => {
    const failures = result.runs.filter((r) => r.error).map((r) => `${r.workload}: ${r.error}`);
    assert.equal(outcome.code, 0, `${failures.join('\n')}\n${outcome.stderr.slice(-3000)}`);
    assert.deepEqual(result.runs.map((r) => r.workload), WORKLOADS.map((w) => w.name));
    assert.equal(result.command, 'npm run bench -- --smoke --out ' + join(dir, 'results'));
    assert.ok(result.machine.cores > 0 && result.machine.memoryBytes > 0 && result.machine.node === process.version);
    assert.equal((result.config.effective as { log: { level: string } }).log.level, 'info', 'the effective config is recorded');
    for (const run of result.runs) {
      assert.equal(run.error, undefined, `${run.workload}: ${run.error}`);
      assert.ok(run.figures.length > 0, `${run.workload} reports figures`);
      assert.ok(outcome.stdout.includes(`${run.workload} — `), `${run.workload} has a table`);
      for (const f of run.figures) {
        for (const summary of [f, ...(f.baseline ? [f.baseline] : []), ...(f.ratio ? [f.ratio] : [])]) {
          for (const value of [summary.min, summary.median, summary.max]) assert.ok(Number.isFinite(value), `${run.workload}: ${f.name}: ${value}`);
          assert.ok(summary.min <= summary.median && summary.median <= summary.max, `${run.workload}: ${f.name}`);
        }
      }
    }
  });

  it('the workloads stop every process they start and remove every temporary directory', () => {
    assert.deepEqual(readdirSync(benchTmp), []);
    assert.doesNotMatch(outcome.stderr, /left \d+ process/);
  });

  it('ingest reports blocks/s, every stage and RSS sample for every configuration', () => {
    const run = runOf(result, 'ingest');
    for (const configuration of ['1 thread, commit/block', '1 thread, commit/64', 'pool, commit/block', 'pool, commit/64']) {
      const names = run.figures.filter((f) => f.name.startsWith(`${configuration}: `)).map((f) => f.name.slice(configuration.length + 2));
      assert.deepEqual(names.slice(0, 2), ['verified ingest', 'wall time']);
      for (const stage of [...INGEST_STAGES, 'RSS middle', 'RSS anonymous end']) assert.ok(names.includes(stage), `${configuration}: ${stage}`);
      assert.ok(byName(run, `${configuration}: verified ingest`).min > 0);
    }
    assert.ok(byName(run, 'sender recovery, blob txs only').min > 0);
    assert.equal(byName(run, 'pool threads (runtime.pool_threads)').median, 2, 'the pool takes the config default');
  });

  it('verify measures every keccak implementation here beside the WebAssembly fallback, on the mainnet fixtures and the devnet chain', () => {
    const run = runOf(result, 'verify');
    for (const set of ['mainnet fixtures', 'devnet chain']) {
      const figures = run.figures.filter((f) => f.name.startsWith(set));
      assert.ok(figures.some((f) => / \(in use\)/.test(f.name)), `${set}: the implementation in use is named`);
      assert.ok(figures.some((f) => f.name.includes('verify, wasm (fallback')), `${set}: the fallback is measured`);
      assert.ok(figures.filter((f) => f.baseline).every((f) => f.baseline!.name === 'wasm fallback' && f.ratio!.min > 0), set);
    }
    // The history lane's JSON-RPC conversion: the pool's path beside the lane's former one, in the same rounds.
    const conversion = run.figures.find((f) => f.name.startsWith('JSON-RPC answers of the mainnet fixtures → verified material'));
    assert.ok(conversion && conversion.min > 0 && conversion.baseline && conversion.ratio!.min > 0, 'the conversion paths are measured side by side');
  });

  it('p2p fetches the chain from 1 and 4 peers and, in the same run, from a JSON-RPC upstream with the rpc source', () => {
    const run = runOf(result, 'p2p');
    for (const label of ['1 peer', '4 peers', 'rpc source']) {
      assert.ok(byName(run, `blocks/s, ${label}`).min > 0, label);
      assert.ok(byName(run, `CPU per block, follower, ${label}`).min > 0, label);
      assert.ok(byName(run, `RSS of the follower after the pass, ${label}`).min > 0, label);
    }
    assert.ok(byName(run, 'CPU per block, serving upstream, rpc source').min > 0);
    for (const name of ['blocks/s, 1 peer', 'CPU per block, follower, 1 peer']) {
      const figure = byName(run, name);
      assert.ok(figure.baseline && figure.baseline.name.startsWith('rpc source') && figure.ratio!.min > 0, `${name} is beside the rpc source`);
    }
  });

  it('query serves the typed routes and the entity pages from the node and the baseline, with no errors, each figure beside its baseline', () => {
    const run = runOf(result, 'query');
    assert.equal(byName(run, 'runs with errors, timeouts or non-2xx').max, 0);
    for (const scenario of ['one block', '20-block page', '20-block entity page', 'blob transactions entity page (up to 20 rows)']) {
      const throughput = byName(run, `${scenario}: throughput`);
      assert.ok(throughput.min > 0 && throughput.baseline!.min > 0 && throughput.ratio!.min > 0, scenario);
      assert.equal(throughput.baseline!.name, 'naive node:http');
    }
    const calm = byName(run, 'at one block per 1 s, one block: throughput');
    assert.ok(calm.min > 0 && calm.baseline!.min > 0, 'the one-block scenario is measured again with the node at one block per second');
  });

  it('consumer reads and acknowledges the whole log in every loop, the relay loop included', () => {
    const run = runOf(result, 'consumer');
    for (const setting of ['stressed (block every 20 ms)', 'at one block per 1 s']) {
      const sequential = byName(run, `${setting}, sequential: changes read per round (log × passes)`);
      for (const mode of ['pipelined', 'prefetched', 'relay']) {
        assert.ok(byName(run, `${setting}, ${mode}: read + ack throughput`).min > 0, `${setting}, ${mode}`);
        // Each consumer reads up to the head seen at the round's start; the log only grows in between.
        assert.ok(byName(run, `${setting}, ${mode}: changes read per round (log × passes)`).min >= sequential.min * 0.9, `${setting}, ${mode} reads the log`);
      }
    }
  });

  it('query and jsonrpc name their load generator; jsonrpc measures each method against the naive baseline and the bare-uWS ceiling', () => {
    for (const workload of ['query', 'jsonrpc']) assert.match(runOf(result, workload).description, /under (wrk|autocannon)/, workload);
    const run = runOf(result, 'jsonrpc');
    for (const method of ['eth_getBlockByNumber (full transactions)', 'eth_getBlockByNumber (transaction hashes)', 'eth_getBlockReceipts']) {
      const throughput = byName(run, `${method}: throughput`);
      assert.equal(throughput.baseline!.name, 'naive node:http');
      const ceiling = byName(run, `${method}: throughput vs ceiling`);
      assert.equal(ceiling.baseline!.name, 'ceiling: bare uWS, same bytes');
      assert.ok(throughput.min > 0 && ceiling.baseline!.min > 0 && ceiling.ratio!.min > 0, method);
      assert.ok(byName(run, `${method}: answer size`).min > 0, method);
    }
  });

  it('sse holds every stream open on the node and the baseline and delivers the changes of the window to each', () => {
    const run = runOf(result, 'sse');
    const both = (name: string) => {
      const f = byName(run, name);
      return [f, f.baseline!];
    };
    for (const f of both('streams established')) assert.equal(f.min, 50);
    for (const f of both('disconnects')) assert.equal(f.max, 0);
    // A change at the window's edge can reach some streams just inside it and others just outside.
    for (const f of both('(stream, change) pairs delivered')) assert.ok(f.min > 0.8 && f.max <= 1, `delivered ${f.min}`);
    for (const f of both('events delivered')) assert.ok(f.min > 0);
  });

  it('runtime reports mailbox throughput, ask round trips and restarts', () => {
    const run = runOf(result, 'runtime');
    for (const name of ['mailbox one-way, batched', 'mailbox one-way, unbatched', 'ask round trip p99', 'restart (crash → serving)']) assert.ok(byName(run, name).min > 0, name);
  });

  it('the report renders from the smoke result', () => {
    const out = join(dir, 'report.html');
    const report = spawnSync(process.execPath, [REPORT_CLI, join(dir, 'results'), '--out', out], { encoding: 'utf8' });
    assert.equal(report.status, 0, report.stderr);
    const html = readFileSync(out, 'utf8');
    for (const run of result.runs) assert.ok(html.includes(`<h3>${run.workload}</h3>`), run.workload);
  });
});

describe('bench usage errors', () => {
  it('an unknown config key, a bad --config file and an unknown workload stop the run before anything starts, naming the problem', async () => {
    const badKey = await runBench(['runtime', '--set', 'runtime.no_such_key=1', '--out', join(dir, 'never')]);
    assert.equal(badKey.code, 2);
    assert.match(badKey.stderr, /runtime\.no_such_key/);
    const badFile = await runBench(['runtime', '--config', join(dir, 'missing.toml')]);
    assert.equal(badFile.code, 2);
    assert.match(badFile.stderr, /missing\.toml/);
    const badSeries = await runBench(['runtime', '--series', 'runtime.pool_threads=2,zero']);
    assert.equal(badSeries.code, 2);
    assert.match(badSeries.stderr, /runtime\.pool_threads.*a number/);
    const unknown = await runBench(['no-such-workload']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown workload 'no-such-workload'/);
    assert.deepEqual(readdirSync(dir).filter((name) => name === 'never'), []);
  });
});
