/**
 * `[[sources.history]] kind = "era"` in the configuration: a bad entry stops start-up naming the key, the value and
 * what was expected (no path or url, both, a url that is not http(s), a path that is not a readable directory of
 * mainnet Era1 files, era keys on another kind); a good one is resolved (path against the config file's folder,
 * cache_dir defaulting under data_dir) and reaches the history lane.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ConfigError, loadConfig } from '../../../actors/node/config.js';
import { buildLanes } from '../../../actors/node/lanes.js';
import { resolveChainSpec } from '../../../actors/node/chain-spec.js';
import type { HistoryArgs } from '../../../actors/history/actor.js';
import { ERA1_DIR } from '../../net/era/era1-copies.js';

function withEraSource(lines: string, run: (file: string, dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-era-config-'));
  try {
    const file = join(dir, 'node.toml');
    writeFileSync(file, `data_dir = "data"\n[[sources.history]]\nid = "era1"\nkind = "era"\n${lines}\n`);
    run(file, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function problems(file: string): Array<{ key: string; value: string; expected: string }> {
  try {
    loadConfig(file);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return [...error.problems];
  }
  assert.fail('expected the configuration to be refused');
}

test('an era source without path or url, or with both, or with a url that is not http(s), is refused naming the key', () => {
  withEraSource('', (file) => {
    const [problem, ...rest] = problems(file);
    assert.deepEqual(rest, []);
    assert.deepEqual([problem!.key, problem!.value], ['sources.history.0.path', '(missing)']);
    assert.match(problem!.expected, /a directory of Era1 files \(path\), or the http\(s\) base URL of an Era1 archive \(url\), for kind = "era"/);
  });
  withEraSource(`path = "${ERA1_DIR}"\nurl = "https://era1.example/"`, (file) => {
    assert.deepEqual(problems(file).map((p) => [p.key, p.value, p.expected]), [['sources.history.0.url', '"https://era1.example/"', 'expected either path (a directory) or url (an HTTP archive) for kind = "era", not both']]);
  });
  withEraSource('url = "ftp://era1.example/"', (file) => {
    assert.deepEqual(problems(file).map((p) => [p.key, p.value]), [['sources.history.0.url', '"ftp://era1.example/"']]);
  });
  withEraSource(`path = "${ERA1_DIR}"\ncache_dir = "cache"`, (file) => {
    assert.deepEqual(problems(file).map((p) => [p.key, p.value]), [['sources.history.0.cache_dir', '"cache"']]);
  });
});

test('an era path that is missing, not a directory or without mainnet Era1 files is refused at load naming the key, the value and what was expected', () => {
  withEraSource('path = "./no-such-dir"', (file) => {
    const [problem] = problems(file);
    assert.deepEqual([problem!.key, problem!.value], ['sources.history.0.path', '"./no-such-dir"']);
    assert.match(problem!.expected, /^a readable directory of Era1 files \(ENOENT for .*no-such-dir\)$/);
  });
  withEraSource('path = "empty"', (file, dir) => {
    mkdirSync(join(dir, 'empty'));
    writeFileSync(join(dir, 'empty', 'sepolia-00000-01234567.era1'), '');
    const [problem] = problems(file);
    assert.equal(problem!.key, 'sources.history.0.path');
    assert.match(problem!.expected, /^a directory holding mainnet Era1 files named mainnet-NNNNN-xxxxxxxx\.era1 \(.*empty holds none\)$/);
  });
  withEraSource('path = "node.toml"', (file) => {
    assert.match(problems(file)[0]!.expected, /is not a directory/);
  });
});

test('era keys on another kind are refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-era-config-'));
  try {
    const file = join(dir, 'node.toml');
    writeFileSync(file, '[[sources.history]]\nid = "archive"\nkind = "rpc"\nurl = "http://127.0.0.1:8545"\npath = "/srv/era1"\n');
    assert.deepEqual(problems(file).map((p) => [p.key, p.expected]), [['sources.history.0.path', 'expected no path for kind = "rpc" (it is a key of kind = "era")']]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a good era source is resolved (path against the config file\'s folder, cache_dir under data_dir) and reaches the history lane', async () => {
  const wiring = async (lines: (dir: string) => string): Promise<{ history: HistoryArgs; dir: string }> => {
    const dir = mkdtempSync(join(tmpdir(), 'cdn-era-config-'));
    try {
      const file = join(dir, 'node.toml');
      writeFileSync(file, `data_dir = "data"\n[[sources.history]]\nid = "era1"\nkind = "era"\n${lines(dir)}\n`);
      const loaded = loadConfig(file);
      const spec = await resolveChainSpec(loaded.config, dir);
      const lane = buildLanes(loaded.config, loaded.dataDir, spec).find((l) => l.lane === 'history')!;
      return { history: lane.children[0]!.args as HistoryArgs, dir };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const relativePath = await wiring((dir) => `path = "${relative(dir, ERA1_DIR)}"`);
  assert.deepEqual(relativePath.history.sources.map((s) => [s.id, s.kind, s.path]), [['era1', 'era', ERA1_DIR]]);
  const http = await wiring(() => 'url = "https://era1.example/"\ncache_files = 3');
  assert.deepEqual(http.history.sources.map((s) => [s.kind, s.url, s.cacheDir, s.cacheFiles]), [['era', 'https://era1.example/', join(http.dir, 'data', 'era1-cache', 'era1'), 3]]);
});
