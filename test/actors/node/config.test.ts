/**
 * The configuration (actors/node/config.ts, config-schema.ts): config.example.toml shows every key with its default,
 * bad values stop start-up naming the key, the value and what was expected, and what the lanes are told.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, describeConfig, loadConfig } from '../../../actors/node/config.js';
import type { NodeConfig } from '../../../actors/node/config-schema.js';
import { skippedHistorySources } from '../../../actors/node/history-sources.js';
import { buildLanes } from '../../../actors/node/lanes.js';
import { resolveChainSpec, type ChainSpec } from '../../../actors/node/chain-spec.js';
import type { HistoryArgs } from '../../../actors/history/actor.js';
import type { ProcessorArgs } from '../../../actors/processor/actor.js';
import type { RpcArgs } from '../../../actors/rpc/actor.js';
import { PROJECT_ROOT } from '../../support/paths.js';
import { runCli } from '../../support/node-process.js';

function withConfig(toml: string, run: (file: string, dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-config-'));
  try {
    const file = join(dir, 'node.toml');
    writeFileSync(file, toml);
    run(file, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function problems(run: () => unknown): Array<{ key: string; value: string; expected: string }> {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return [...error.problems];
  }
  assert.fail('expected the configuration to be rejected');
}

test('config.example.toml is valid and lists every key of the schema with its default', () => {
  const loaded = loadConfig(join(PROJECT_ROOT, 'config.example.toml'));
  withConfig('', (file) => {
    const defaults = loadConfig(file);
    const { processors: exampleProcessors, ...example } = loaded.config;
    const { processors: defaultProcessors, ...rest } = defaults.config;
    // History sources default to none; the example lists the devnet's, so jobs and probes work offline out of the box.
    const withoutHistory = <C extends typeof example>(config: C) => ({ ...config, data_dir: '', sources: { ...config.sources, history: [] } });
    assert.deepEqual(withoutHistory(example), withoutHistory(rest), 'the example shows exactly the defaults');
    assert.deepEqual(rest.sources.history, []);
    assert.deepEqual(example.sources.history.map((source) => [source.id, source.kind]), [['devnet', 'devnet']]);
    // Out of the box the example also runs the token and pool kinds over the devnet's contracts.
    assert.deepEqual(exampleProcessors[0], defaultProcessors[0], 'the default blobs instance, as it is');
    // … and erc20-replay, erc20's replay target, so artifact replay works out of the box (it claims no /v1/q alias).
    assert.deepEqual(exampleProcessors.map((p) => [p.id, p.kind]), [['blobs', 'blobs'], ['erc20', 'erc20'], ['erc20-replay', 'erc20'], ['amm', 'amm']]);
    const common = ({ id: _id, kind: _kind, tokens: _tokens, pools: _pools, artifacts: _artifacts, ...keys }: (typeof exampleProcessors)[number]) => keys;
    for (const processor of exampleProcessors.slice(1)) assert.deepEqual(common(processor), common(defaultProcessors[0]!), `${processor.id} shows the per-processor defaults`);
    // Out of the box erc20 keeps its artifacts (a window) and erc20-replay takes them; the others show the default (none).
    assert.deepEqual(exampleProcessors.map((p) => p.artifacts), [
      defaultProcessors[0]!.artifacts, { retention: 'window', window_blocks: 10_000 }, { ...defaultProcessors[0]!.artifacts, replay_from: 'erc20' }, defaultProcessors[0]!.artifacts,
    ]);
    assert.deepEqual(exampleProcessors[2]!.tokens, exampleProcessors[1]!.tokens, 'the replay target has erc20\'s options');
    assert.deepEqual(defaultProcessors[0]!.artifacts, { retention: 'none', window_blocks: 10_000 });
  });
  const raw = parseToml(readFileSync(join(PROJECT_ROOT, 'config.example.toml'), 'utf8')) as Record<string, unknown>;
  const missing: string[] = [];
  const walk = (value: unknown, shown: unknown, path: string) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, child] of Object.entries(value)) walk(child, (shown as Record<string, unknown> | undefined)?.[key], path ? `${path}.${key}` : key);
    } else if (shown === undefined) missing.push(path);
  };
  walk(loaded.config, raw, '');
  const shownSource = ((raw.sources as Record<string, unknown>).history as Array<Record<string, unknown>>)[0]!;
  assert.deepEqual(Object.keys(shownSource).sort(), Object.keys(loaded.config.sources.history[0]!).sort(), 'the example history source shows every key with its default');
  assert.deepEqual(missing.filter((key) => !key.startsWith('processors')), [], 'every key appears in config.example.toml');
  assert.equal(loaded.config.listeners.api, '127.0.0.1:8080');
  assert.equal(loaded.config.listeners.rpc_http, '127.0.0.1:8545');
  assert.equal(loaded.config.listeners.rpc_ws, '127.0.0.1:8546');
  assert.equal(loaded.config.auth.token_file, '');
});

test('unknown keys and wrong types are rejected with the key, the value and what was expected', () => {
  withConfig('data_dir = 5\n[listeners]\napi = "localhost"\nextra = 1\n[actors.listener]\nmemory_mb = "lots"\n[bogus]\n', (file) => {
    const found = problems(() => loadConfig(file));
    const byKey = Object.fromEntries(found.map((p) => [p.key, p]));
    assert.match(byKey.data_dir!.expected, /expected string/);
    assert.equal(byKey.data_dir!.value, '5');
    assert.match(byKey['listeners.api']!.expected, /host:port/);
    assert.equal(byKey['listeners.api']!.value, '"localhost"');
    assert.match(byKey['listeners.extra']!.expected, /unknown key; expected one of: api, rpc_http, rpc_ws/);
    assert.match(byKey['actors.listener.memory_mb']!.expected, /expected number/);
    assert.match(byKey.bogus!.expected, /unknown key/);
  });
  withConfig('data_dir = [unterminated', (file) => {
    assert.match(problems(() => loadConfig(file))[0]!.expected, /valid TOML/);
  });
});

test('--set overrides one key, parsed by that key\'s type', () => {
  withConfig('', (file) => {
    const loaded = loadConfig(file, ['listeners.api=127.0.0.1:18080', 'data_dir=/tmp/x', 'runtime.pool_threads=4', 'runtime.message_batching=false', 'log.level=debug']);
    assert.equal(loaded.config.listeners.api, '127.0.0.1:18080');
    assert.equal(loaded.dataDir, '/tmp/x');
    assert.equal(loaded.config.runtime.pool_threads, 4);
    assert.equal(loaded.config.runtime.message_batching, false);
    assert.equal(loaded.config.log.level, 'debug');
    assert.match(problems(() => loadConfig(file, ['runtime.pool_threads=four']))[0]!.expected, /a number/);
    assert.match(problems(() => loadConfig(file, ['runtime.message_batching=yes']))[0]!.expected, /true or false/);
    assert.match(problems(() => loadConfig(file, ['runtime.nope=1']))[0]!.expected, /exists in the configuration schema/);
    assert.match(problems(() => loadConfig(file, ['log.level=loud']))[0]!.expected, /expected one of/);
    assert.match(problems(() => loadConfig(file, ['no-equals-sign']))[0]!.expected, /dotted.key=value/);
  });
});

test('the API token comes from an owner-only environment file and is masked in the effective config', () => {
  withConfig('[auth]\ntoken_file = "api.env"\n', (file, dir) => {
    const tokenFile = join(dir, 'api.env');
    writeFileSync(tokenFile, 'CHAIN_NODE_API_TOKEN=s3cret-token-value-0123456789\n', { mode: 0o600 });
    const loaded = loadConfig(file);
    assert.equal(loaded.apiToken, 's3cret-token-value-0123456789');
    const shown = JSON.stringify(describeConfig(loaded));
    assert.ok(!shown.includes('s3cret'), 'the effective config never shows the token');
    assert.match(shown, /"token":"\*+"/);
    chmodSync(tokenFile, 0o644);
    const [problem] = problems(() => loadConfig(file));
    assert.equal(problem!.key, 'auth.token_file');
    assert.match(problem!.expected, /readable only by its owner \(mode is 644/);
    chmodSync(tokenFile, 0o600);
    writeFileSync(tokenFile, 'OTHER=1\n');
    assert.match(problems(() => loadConfig(file))[0]!.expected, /CHAIN_NODE_API_TOKEN=<token>/);
  });
  withConfig('[auth]\ntoken_file = "missing.env"\n', (file) => {
    assert.match(problems(() => loadConfig(file))[0]!.expected, /existing environment file/);
  });
});

test('`config check` prints the effective config, and exits 1 naming the key on a bad config; unknown commands exit 2', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-config-cli-'));
  try {
    const file = join(dir, 'node.toml');
    writeFileSync(file, '[runtime]\npool_threads = 3\n');
    const ok = await runCli(['config', 'check', '--config', file, '--set', 'listeners.api=127.0.0.1:9999']);
    assert.equal(ok.code, 0, ok.stderr);
    const effective = JSON.parse(ok.stdout) as { runtime: { pool_threads: number }; listeners: { api: string } };
    assert.equal(effective.runtime.pool_threads, 3);
    assert.equal(effective.listeners.api, '127.0.0.1:9999');
    writeFileSync(file, '[runtime]\npool_threads = -1\n');
    const bad = await runCli(['config', 'check', '--config', file]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /config key 'runtime.pool_threads' = -1: .*expected/i);
    const badStart = await runCli(['start', '--config', file]);
    assert.equal(badStart.code, 1, 'a bad config stops start-up');
    assert.match(badStart.stderr, /runtime.pool_threads/);
    for (const args of [['frobnicate'], ['start', '--config', file, '--verbose'], ['db', 'explode', '--data-dir', dir], ['config', 'check']]) {
      const usage = await runCli(args);
      assert.equal(usage.code, 2, `usage error for ${args.join(' ')}`);
      assert.match(usage.stderr, /Usage:/);
    }
    assert.equal((await runCli(['--help'])).code, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('[processors.artifacts] replay_from names another processor of the same kind and options that retains artifacts; [budgets.artifacts] has its defaults', () => {
  const erc20 = (id: string, tokens: string, artifacts: string) => `[[processors]]\nid = "${id}"\nkind = "erc20"\ntokens = ${tokens}\n[processors.artifacts]\n${artifacts}\n`;
  withConfig(erc20('a', '"*"', 'retention = "full"') + erc20('b', '"*"', 'replay_from = "a"'), (file) => {
    const { config } = loadConfig(file);
    assert.deepEqual(config.processors[1]!.artifacts, { retention: 'none', window_blocks: 10_000, replay_from: 'a' });
    assert.deepEqual(config.budgets.artifacts, { max_bytes: 1024 ** 3, max_pending_blocks: 4096 });
  });
  const cases: Array<[string, RegExp]> = [
    [erc20('a', '"*"', 'retention = "full"') + erc20('b', '["0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506"]', 'replay_from = "a"'), /same kind and options/],
    [erc20('a', '"*"', 'retention = "none"') + erc20('b', '"*"', 'replay_from = "a"'), /retains artifacts/],
    [erc20('b', '"*"', 'replay_from = "nope"'), /id of another \[\[processors\]\] entry/],
    [erc20('a', '"*"', 'retention = "full"') + erc20('b', '"*"', 'replay_from = "a"').replace('kind = "erc20"', 'kind = "erc20"\nstart_block = 3'), /no start_block/],
  ];
  for (const [toml, expected] of cases) {
    withConfig(toml, (file) => {
      const found = problems(() => loadConfig(file));
      assert.ok(found.some((p) => p.key.endsWith('artifacts.replay_from') && expected.test(p.expected)), `${JSON.stringify(found)} names replay_from: ${expected}`);
    });
  }
});

/** What the history lane, the rpc lane and processor blobs (given start_block 0, so it would be cold-backfilled) are told. */
function historyWiring(config: NodeConfig, spec: ChainSpec): { history: HistoryArgs; rpc: RpcArgs; blobs: ProcessorArgs } {
  const started = { ...config, processors: config.processors.map((p) => (p.id === 'blobs' ? { ...p, start_block: 0 } : p)) };
  const lanes = buildLanes(started, '/nonexistent', spec);
  const args = <T>(lane: string) => lanes.find((l) => l.lane === lane)!.children[0]!.args as T;
  return { history: args<HistoryArgs>('history'), rpc: args<RpcArgs>('rpc'), blobs: args<ProcessorArgs>('processor.blobs') };
}

test('with the README\'s rpc settings, config.example.toml\'s "devnet" history source is skipped with its reason, not refused: the lanes use only the other sources, and on_demand_source may not name it', async () => {
  const exampleFile = join(PROJECT_ROOT, 'config.example.toml');
  const follow = ['sources.live.kind=rpc', 'sources.live.url=http://127.0.0.1:8545', 'finality.kind=rpc'];
  // The lanes' history wiring does not depend on the chain: the devnet's spec stands in for the upstream's.
  const spec = await resolveChainSpec(loadConfig(exampleFile).config, PROJECT_ROOT);
  const reason = 'kind "devnet" serves the embedded devnet\'s chain, and sources.live.kind is "rpc"';

  const onDevnet = loadConfig(exampleFile).config;
  assert.deepEqual(skippedHistorySources(onDevnet), []);
  const devnetWiring = historyWiring(onDevnet, spec);
  assert.deepEqual([devnetWiring.history.sources.map((s) => s.id), devnetWiring.history.onDemand?.source, devnetWiring.blobs.coldBackfillSource], [['devnet'], 'devnet', 'devnet']);

  const readme = loadConfig(exampleFile, follow).config;
  assert.deepEqual(skippedHistorySources(readme), [{ id: 'devnet', reason }]);
  const { history, rpc, blobs } = historyWiring(readme, spec);
  assert.deepEqual(history.sources, [], 'the history lane does not build the skipped source');
  assert.deepEqual(history.skippedSources, [{ id: 'devnet', reason }], 'and knows why, to answer requests naming it');
  assert.equal(history.onDemand?.source, null, 'no source left: on-demand history is off');
  assert.equal(rpc.history, null);
  assert.equal(blobs.coldBackfillSource, undefined, 'no cold backfill from a skipped source');

  withConfig(`${readFileSync(exampleFile, 'utf8')}\n[[sources.history]]\nid = "archive"\nkind = "rpc"\nurl = "http://127.0.0.1:8545"\n`, (file) => {
    const wiring = historyWiring(loadConfig(file, follow).config, spec);
    assert.deepEqual([wiring.history.sources.map((s) => s.id), wiring.history.onDemand?.source, wiring.blobs.coldBackfillSource], [['archive'], 'archive', 'archive'],
      'the first source the node uses is the default, the on-demand and the cold-backfill source');
    const found = problems(() => loadConfig(file, [...follow, 'history.on_demand_source=devnet']));
    assert.deepEqual(found.map((p) => [p.key, p.value]), [['history.on_demand_source', '"devnet"']]);
    assert.match(found[0]!.expected, /the id of a \[\[sources\.history\]\] entry the node uses, or "" for the first one: "devnet" is skipped \(kind "devnet" .* sources\.live\.kind is "rpc"\)/);
    assert.equal(loadConfig(file, [...follow, 'history.on_demand_source=archive']).config.history.on_demand_source, 'archive');
  });
});

test('a [[sources.history]] of kind "p2p" needs sources.live.kind = "p2p" and takes no url: refused naming the key', () => {
  withConfig('[[sources.history]]\nid = "peers"\nkind = "p2p"\n', (file) => {
    const [problem] = problems(() => loadConfig(file));
    assert.equal(problem!.key, 'sources.history.0.kind');
    assert.match(problem!.expected, /expected sources\.live\.kind = "p2p" for a history source of kind "p2p".*sources\.live\.kind is "devnet"/);
  });
  withConfig('[sources.live]\nkind = "p2p"\ntrusted_peers = ["enode://ce08db91e40579a68801cb331dc0d48fc5afe05e04775fe85f4e51486a8eea03ee6e807420e72c9fe072b2dc36bbfd1435c26dd19faa3769a64d13a170ac05da@127.0.0.1:30303"]\n[finality]\nkind = "devnet"\n[[sources.history]]\nid = "peers"\nkind = "p2p"\nurl = "http://127.0.0.1:8545"\n', (file) => {
    const byKey = Object.fromEntries(problems(() => loadConfig(file)).map((p) => [p.key, p]));
    assert.match(byKey['sources.history.0.url']!.expected, /expected no url for kind = "p2p"/);
  });
  withConfig('[sources.live]\nkind = "p2p"\ntrusted_peers = ["enode://ce08db91e40579a68801cb331dc0d48fc5afe05e04775fe85f4e51486a8eea03ee6e807420e72c9fe072b2dc36bbfd1435c26dd19faa3769a64d13a170ac05da@127.0.0.1:30303"]\n[finality]\nkind = "devnet"\n[[sources.history]]\nid = "peers"\nkind = "p2p"\n', (file) => {
    assert.equal(loadConfig(file).config.sources.history[0]!.kind, 'p2p');
  });
});

test('sources.live.start: "genesis" or "finalized", the latter only with a p2p live source and a proving finality backend; refused naming the key', () => {
  const peer = 'trusted_peers = ["enode://ce08db91e40579a68801cb331dc0d48fc5afe05e04775fe85f4e51486a8eea03ee6e807420e72c9fe072b2dc36bbfd1435c26dd19faa3769a64d13a170ac05da@127.0.0.1:30303"]';
  withConfig(`[sources.live]\nkind = "p2p"\n${peer}\nstart = "checkpoint"\n`, (file) => {
    const problem = problems(() => loadConfig(file)).find((p) => p.key === 'sources.live.start');
    assert.equal(problem?.value, '"checkpoint"');
    assert.match(problem!.expected, /"genesis".*"finalized"/);
  });
  withConfig(`[sources.live]\nkind = "p2p"\n${peer}\nstart = "finalized"\n[finality]\nkind = "devnet"\n`, (file) => {
    const problem = problems(() => loadConfig(file)).find((p) => p.key === 'sources.live.start');
    assert.match(problem!.expected, /finality\.kind = "beacon_api" or "consensus_p2p".*finality\.kind "devnet"/);
  });
  withConfig(`[sources.live]\nkind = "p2p"\n${peer}\nstart = "finalized"\n[finality]\nkind = "beacon_api"\nurls = ["http://127.0.0.1:5052"]\ncheckpoint_root = "0x09b0f1635ea8c671af3ba22f56bc2c58e66cb9925c5038a3ae20a9b850710b45"\n`, (file) => {
    assert.equal(loadConfig(file).config.sources.live.start, 'finalized');
  });
});
