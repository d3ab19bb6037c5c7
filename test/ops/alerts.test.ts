import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../support/paths.js';
import { promtool } from '../support/promtool.js';

const RULES = join(PROJECT_ROOT, 'ops', 'alerts.yml');
const RULE_TESTS = join(PROJECT_ROOT, 'test', 'ops', 'alerts.promtest.yml');

test('promtool check rules accepts ops/alerts.yml', async () => {
  const check = await promtool(['check', 'rules', RULES]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /SUCCESS: 14 rules found/);
});

test('promtool test rules: every alert fires on its bad series and stays quiet on its ok series', async () => {
  const alerts = [...readFileSync(RULES, 'utf8').matchAll(/^\s*- alert: (\w+)$/gm)].map((m) => m[1]!);
  const tests = readFileSync(RULE_TESTS, 'utf8');
  for (const alert of alerts) assert.match(tests, new RegExp(`alertname: ${alert}$`, 'm'), `${alert} has a rule test`);
  const run = await promtool(['test', 'rules', RULE_TESTS]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /SUCCESS/);
});
