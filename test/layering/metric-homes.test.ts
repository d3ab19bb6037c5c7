/**
 * Where metrics are created (issue 29 point 5): each lane declares its metrics in one typed object in
 * actors/<lane>/metrics.ts (the root's in actors/node/metrics.ts), and the code that updates them gets that
 * object; no other file of the layered folders constructs a prom-client metric or the API's route metrics.
 * The check is proven on small sources first, so a rule that could not fail would show.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { PROJECT_ROOT } from '../support/paths.js';
import { readImportGraph } from './import-graph.js';

const METRIC_CLASSES = new Set(['Counter', 'Gauge', 'Histogram', 'Summary', 'RouteMetrics']);
const METRICS_HOME = /^actors\/[^/]+\/metrics\.ts$/;

/** `file: new Class` for every metric constructed outside a lane's metrics.ts. */
function metricsOutsideHomes(sources: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of sources) {
    // Only files that name a metric class after `new` are parsed (comments are then told apart by the parser).
    if (METRICS_HOME.test(file) || !/\bnew\s+(Counter|Gauge|Histogram|Summary|RouteMetrics)\b/.test(text)) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && METRIC_CLASSES.has(node.expression.text)) found.push(`${file}: new ${node.expression.text}`);
      node.forEachChild(visit);
    };
    visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest));
  }
  return found;
}

test('the metric-home rule catches a metric constructed outside a lane\'s metrics.ts, and not one inside it or in a comment', () => {
  const sources = new Map([
    ['actors/chain/metrics.ts', "export const m = { g: new Gauge({ name: 'a', help: 'a' }) };"],
    ['actors/chain/actor.ts', "// new Counter() in a comment is no metric\nconst c = new Counter({ name: 'b', help: 'b' });"],
    ['api/sse/sse-hub.ts', 'class Hub { constructor() { this.h = new Histogram({}); } }'],
    ['actors/node/store-readings.ts', 'const seen = new Map();'],
  ]);
  assert.deepEqual(metricsOutsideHomes(sources), ['actors/chain/actor.ts: new Counter', 'api/sse/sse-hub.ts: new Histogram']);
});

test('every metric of the source tree is constructed in its lane\'s metrics.ts', () => {
  const files = [...readImportGraph(PROJECT_ROOT).keys()];
  assert.ok(files.length > 300, `read ${files.length} files`);
  const sources = new Map(files.map((file) => [file, readFileSync(join(PROJECT_ROOT, file), 'utf8')]));
  assert.deepEqual(metricsOutsideHomes(sources), []);
  const homes = files.filter((file) => METRICS_HOME.test(file) && /\bnew (Counter|Gauge|Histogram|Summary)\(/.test(sources.get(file)!));
  assert.ok(homes.includes('actors/node/metrics.ts') && homes.includes('actors/listener/metrics.ts'), homes.join(', '));
});
