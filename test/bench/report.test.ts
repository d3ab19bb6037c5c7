import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { compared, figure } from '../../bench/figures.js';
import { describeMachine } from '../../bench/machine.js';
import { renderReport } from '../../bench/report/html.js';
import { readResultFile, RESULT_FORMAT, type BenchResult, type WorkloadRun } from '../../bench/result-file.js';

const REPORT_CLI = fileURLToPath(new URL('../../bench/report/cli.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'cdn-bench-report-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const VOID = new Set(['meta', 'link', 'br', 'hr', 'img', 'input', 'col', 'area', 'base', 'wbr', 'source']);

/** Tags open and close in order (void HTML elements and `/>` SVG elements aside), and every id is unique. */
function assertWellFormed(html: string): void {
  assert.match(html, /^<!DOCTYPE html>\n<html lang="en">/);
  const stack: string[] = [];
  for (const match of html.replace(/<!DOCTYPE[^>]*>/, '').matchAll(/<(\/?)([a-zA-Z][\w-]*)([^>]*?)(\/?)>/g)) {
    const [, closing, rawName, , selfClosing] = match;
    const name = rawName!.toLowerCase();
    if (closing) assert.equal(stack.pop(), name, `</${name}> closes <${stack.at(-1) ?? 'nothing'}> at offset ${match.index}`);
    else if (!selfClosing && !VOID.has(name)) stack.push(name);
  }
  assert.deepEqual(stack, [], 'every element is closed');
  const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
  assert.equal(new Set(ids).size, ids.length, 'ids are unique');
}

function run(workload: string, figures: WorkloadRun['figures'], point: WorkloadRun['point'] = null): WorkloadRun {
  return { workload, description: `${workload} <workload> & co`, point, startedAt: '2026-11-22T01:00:00.000Z', seconds: 3, figures };
}

function sample(startedAt: string, series: BenchResult['series'], runs: WorkloadRun[]): BenchResult {
  return {
    format: RESULT_FORMAT, command: 'npm run bench -- query', startedAt, finishedAt: startedAt, machine: describeMachine(),
    options: { durationSeconds: 5, rounds: 3, connections: 50, smoke: false },
    config: { file: null, sets: [], effective: { log: { level: 'warn' } } }, series, runs,
  };
}

const QUERY = [
  compared('one block: throughput', 'req/s', [900, 1000, 1100], { name: 'naive node:http', values: [500, 500, 500] }, 'higher'),
  compared('one block: latency p50', 'ms', [4, 5, 6], { name: 'naive node:http', values: [8, 8, 8] }, 'lower'),
  compared('one block: latency p99', 'ms', [20, 25, 30], { name: 'naive node:http', values: [40, 40, 40] }, 'lower'),
  figure('runs with errors, timeouts or non-2xx', 'runs', [0]),
];
const INGEST = [figure('1 thread: verified ingest', 'blocks/s', [30, 31, 32]), figure('1 thread: commit', 'ms/block', [1, 2, 3])];

describe('bench report', () => {
  it('a result file becomes one self-contained HTML page with summary, throughput, latency and per-unit-of-work charts', () => {
    const html = renderReport([sample('2026-11-22T01:00:00.000Z', null, [run('query', QUERY), run('ingest', INGEST)])], '2026-11-22T02:00:00.000Z');
    assertWellFormed(html);
    for (const section of ['id="summary"', 'class="section-throughput"', 'class="section-latency"', 'class="section-durations"', 'class="figures"']) assert.ok(html.includes(section), section);
    assert.ok((html.match(/<svg /g) ?? []).length >= 3, 'charts are inline SVG');
    assert.doesNotMatch(html, /<script|<link|\ssrc=|href="http/i, 'nothing is fetched from elsewhere');
    assert.ok(html.includes('2.00×'), 'the median throughput ratio to the baseline is shown');
    assert.ok(html.includes('query &lt;workload&gt; &amp; co'), 'text from result files is escaped');
  });

  it('a series becomes scaling curves, and two runs a history', () => {
    const points = ['1', '2', '4'];
    const series = sample('2026-11-22T01:30:00.000Z', { key: 'actors.listener.instances', values: points },
      points.map((value, i) => run('query', [compared('one block: throughput', 'req/s', [1000 * (i + 1)], { name: 'naive node:http', values: [500] }, 'higher')], { key: 'actors.listener.instances', value })));
    const html = renderReport([sample('2026-11-22T01:00:00.000Z', null, [run('query', QUERY)]), sample('2026-11-22T01:10:00.000Z', null, [run('query', QUERY)]), series], 'now');
    assertWellFormed(html);
    assert.ok(html.includes('class="section-scaling"'));
    assert.ok(html.includes('id="history"'));
    assert.match(html, /<polyline points="[^"]+"/, 'a curve is drawn');
    // The summary's run column links to the section of the newest plain run (sections are numbered newest first).
    assert.match(html, /<td class="run-link"><a href="#run-1" title="2026-11-22T01:10:00.000Z">11-22 01:10<\/a><\/td>/);
    assert.match(html, /<section class="run" id="run-1"><h2>Run 2026-11-22T01:10:00.000Z<\/h2>/);
  });

  it('npm run bench:report reads a folder of result files and writes the page; a file that is not a result is refused by name', () => {
    const result = sample('2026-11-22T01:00:00.000Z', null, [run('query', QUERY)]);
    writeFileSync(join(dir, 'bench-a.json'), JSON.stringify(result));
    assert.equal(readResultFile(join(dir, 'bench-a.json')).runs[0]!.figures[0]!.ratio!.median, 2);
    const out = join(dir, 'report.html');
    const ok = spawnSync(process.execPath, [REPORT_CLI, dir, '--out', out], { encoding: 'utf8' });
    assert.equal(ok.status, 0, ok.stderr);
    assertWellFormed(readFileSync(out, 'utf8'));
    writeFileSync(join(dir, 'other.json'), '{"hello": 1}');
    const bad = spawnSync(process.execPath, [REPORT_CLI, join(dir, 'other.json'), '--out', out], { encoding: 'utf8' });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /other\.json: not a bench result file/);
  });
});
