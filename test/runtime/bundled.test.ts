/**
 * The build's bundles (build/bundle.mjs): every actor module in dist/ has a fresh bundle that the actor system
 * starts instead, found by the build without a list; the bin launches the CLI's bundle; a worker started from a
 * bundle runs the real actor (its bundled host and module share one copy of the runtime).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { bundledModule } from '../../runtime/bundled.js';
import { PROJECT_ROOT } from '../support/paths.js';

const DIST = join(PROJECT_ROOT, 'dist');

function compiled(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return compiled(path);
    return entry.name.endsWith('.js') ? [path] : [];
  });
}

test('every compiled actor module and the worker host have a bundle as new as they are; other modules and paths outside dist have none', () => {
  const actors = compiled(join(DIST, 'actors')).filter((file) => /^export default defineActor\b/m.test(readFileSync(file, 'utf8')));
  assert.ok(actors.length >= 10, `actor modules found: ${actors.length}`);
  for (const module of [...actors, join(DIST, 'runtime', 'worker-entry.js')]) {
    const bundle = bundledModule(module);
    assert.ok(bundle !== null, `${relative(DIST, module)} has a bundle`);
    assert.equal(relative(join(DIST, 'bundle'), bundle), `${relative(DIST, module).slice(0, -3).replaceAll('/', '~')}.js`);
  }
  assert.equal(bundledModule(join(DIST, 'actors', 'node', 'lanes.js')), null, 'a module that is not an entry');
  assert.equal(bundledModule(join(DIST, 'test', 'runtime', 'actors', 'counter.js')), null, 'a test actor');
  assert.equal(bundledModule('/nowhere/actor.js'), null);
});

test('the bin runs the CLI from its bundle', () => {
  const launcher = readFileSync(join(DIST, 'cli.js'), 'utf8');
  assert.match(launcher, /^#!\/usr\/bin\/env node\n/);
  assert.match(launcher, /bundle\/cli\.js/);
  const help = spawnSync(process.execPath, [join(DIST, 'cli.js'), 'help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /chain-node start --config FILE/);
});
