/** `chain-node devnet genesis` as a user runs it: to stdout or a file, and what a bad argument or config says. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devnetGenesis, resolveDevnetConfig } from '../../../net/devnet/index.js';
import { buildGenesisBlock, parseGethGenesis } from '../../../net/eth/index.js';
import { PROJECT_ROOT } from '../../support/paths.js';
import { runCli } from '../../support/node-process.js';

const EXAMPLE = join(PROJECT_ROOT, 'config.example.toml');

test('devnet genesis writes the same genesis.json to stdout and to --out, and the summary names its genesis hash', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-devnet-genesis-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const sets = ['--set', 'devnet.seed=cli-seed', '--set', 'devnet.prague_after_seconds=0'];
  const printed = await runCli(['devnet', 'genesis', '--config', EXAMPLE, ...sets]);
  assert.equal(printed.code, 0, printed.stderr);
  const out = join(dir, 'genesis.json');
  const written = await runCli(['devnet', 'genesis', '--config', EXAMPLE, ...sets, '--out', out]);
  assert.equal(written.code, 0, written.stderr);
  assert.equal(readFileSync(out, 'utf8'), printed.stdout);
  const expected = devnetGenesis(resolveDevnetConfig({ seed: 'cli-seed', forks: { prague: 0 } })).hash;
  assert.equal(buildGenesisBlock(parseGethGenesis(JSON.parse(printed.stdout))).hash, expected);
  const summary = JSON.parse(written.stdout) as { out: string; chainId: number; genesisHash: string; forkTimes: Record<string, number> };
  assert.deepEqual(summary, { out, chainId: 1337, genesisHash: expected, forkTimes: { shanghai: 1_700_000_000, cancun: 1_700_000_000, prague: 1_700_000_000, osaka: 1_700_000_080, bpo1: 1_700_000_120 } });
});

test('devnet genesis: an unknown subcommand or flag is a usage error; a bad [devnet] value or --out path names it', async () => {
  for (const args of [['devnet'], ['devnet', 'export', '--config', EXAMPLE], ['devnet', 'genesis', '--config', EXAMPLE, '--verbose'], ['devnet', 'genesis', '--out', 'x.json']]) {
    const usage = await runCli(args);
    assert.equal(usage.code, 2, `usage error for ${args.join(' ')}`);
    assert.match(usage.stderr, /Usage:[\s\S]*chain-node devnet genesis --config FILE/);
  }
  const badFork = await runCli(['devnet', 'genesis', '--config', EXAMPLE, '--set', 'devnet.osaka_after_seconds=10']);
  assert.equal(badFork.code, 1);
  assert.match(badFork.stderr, /devnet\.forks\.osaka = 10; expected seconds >= forks\.prague \(40\)/);
  const badOut = await runCli(['devnet', 'genesis', '--config', EXAMPLE, '--out', '/nonexistent-dir/genesis.json']);
  assert.equal(badOut.code, 1);
  assert.match(badOut.stderr, /--out "\/nonexistent-dir\/genesis\.json": expected a writable file path \(ENOENT/);
});
