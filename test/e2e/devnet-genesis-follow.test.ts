/**
 * Two real nodes: A runs `npm start`'s config on its devnet; `chain-node devnet genesis` exports that devnet's
 * genesis.json; B follows A over JSON-RPC with it (`finality.kind = "rpc"`) and serves A's blocks. Without the file
 * B refuses to start and names the command. The devnet is paced at two blocks a second (one second of block time
 * each) with Prague, Osaka and BPO1 at blocks 60, 64 and 68 — after B starts following (at A's head then) — so B
 * verifies blocks across every fork transition (the export takes the same `--set`s as A).
 * Then the README's "follow a real node" settings, exactly, on config.example.toml: its "devnet" history source is
 * skipped with one warning (not a refusal), B serves A's blocks, and admin requests naming that source get the reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../support/paths.js';
import { removeDir, runCli, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const EXAMPLE = readFileSync(join(PROJECT_ROOT, 'config.example.toml'), 'utf8');
const DEVNET = ['devnet.block_time_ms=500', 'devnet.prague_after_seconds=60', 'devnet.osaka_after_seconds=64', 'devnet.bpo1_after_seconds=68'];
const PRAGUE_BLOCK = 60;
/** BPO1's block and one more: every fork crossed. */
const LAST_COMPARED = 69;

interface RpcAnswer<T> { result?: T; error?: { message: string; data?: { code?: string } } }

async function call<T>(node: NodeProcess, method: string, params: unknown[]): Promise<RpcAnswer<T>> {
  const response = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await response.json()) as RpcAnswer<T>;
}

async function rpc<T>(node: NodeProcess, method: string, params: unknown[]): Promise<T> {
  const answer = await call<T>(node, method, params);
  if (answer.error !== undefined || !('result' in answer)) throw new Error(`${method} ${JSON.stringify(params)}: ${JSON.stringify(answer)}`);
  return answer.result as T;
}

type Block = { number: string; hash: string };
const blockAt = (node: NodeProcess, tag: string) => rpc<Block | null>(node, 'eth_getBlockByNumber', [tag, false]);

/** The block, or null when the node does not retain it (a follower starts at its upstream's head then). */
async function retainedBlock(node: NodeProcess, number: number): Promise<Block | null> {
  const answer = await call<Block>(node, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false]);
  if (answer.error?.data?.code === 'range_incomplete') return null;
  return rpc<Block>(node, 'eth_getBlockByNumber', [`0x${number.toString(16)}`, false]);
}

/** README, "To follow a real node instead": the live source and finality from the upstream. */
function readmeSets(upstream: NodeProcess): string[] {
  return ['sources.live.kind=rpc', `sources.live.url=${upstream.rpcUrl}`, 'finality.kind=rpc'];
}

function followerSets(upstream: NodeProcess): string[] {
  return [...readmeSets(upstream), 'sources.live.poll_interval_ms=200', 'finality.poll_interval_ms=200'];
}

/** Runs `chain-node devnet genesis` on A's config (with A's `--set`s) into A's directory; its summary. */
async function exportGenesis(a: NodeProcess, sets: readonly string[]): Promise<{ out: string; chainId: number; genesisHash: string; forkTimes: Record<string, number> }> {
  const exported = await runCli(['devnet', 'genesis', '--config', a.configFile, ...sets.flatMap((set) => ['--set', set]), '--out', join(a.dir, 'devnet-genesis.json')]);
  assert.equal(exported.code, 0, exported.stderr);
  return JSON.parse(exported.stdout) as { out: string; chainId: number; genesisHash: string; forkTimes: Record<string, number> };
}

/** Compares B's retained blocks with A's from `top` down; the lowest block B retains. */
async function compareDown(a: NodeProcess, b: NodeProcess, top: number): Promise<number> {
  let first = top;
  for (let n = top; n >= 0; n--) {
    const ours = await retainedBlock(b, n);
    if (ours === null) break;
    assert.equal(ours.hash, (await blockAt(a, `0x${n.toString(16)}`))!.hash, `block ${n}`);
    first = n;
  }
  return first;
}

test('a node follows a devnet node over JSON-RPC with the genesis.json `chain-node devnet genesis` exports, and serves the same blocks', async (t) => {
  const a = await startNodeProcess({ toml: EXAMPLE, sets: DEVNET });
  t.after(async () => { await a.stop(); removeDir(a.dir); });

  const refused = await startNodeProcess({ toml: EXAMPLE, waitReady: false, sets: followerSets(a) });
  t.after(() => removeDir(refused.dir));
  assert.equal(await refused.exited, 1);
  assert.match(refused.output.join('\n'), /sources\.live\.genesis_file.*chain-node devnet genesis --config/s);

  const summary = await exportGenesis(a, DEVNET);
  const genesisFile = summary.out;
  assert.equal(genesisFile, join(a.dir, 'devnet-genesis.json'));
  assert.equal(summary.genesisHash, (await blockAt(a, '0x0'))!.hash, "the file's genesis is A's block 0");
  assert.deepEqual(summary.forkTimes, { shanghai: 1_700_000_000, cancun: 1_700_000_000, prague: 1_700_000_060, osaka: 1_700_000_064, bpo1: 1_700_000_068 });

  const b = await startNodeProcess({ toml: EXAMPLE, sets: [...followerSets(a), `sources.live.genesis_file=${genesisFile}`] });
  t.after(async () => { await b.stop(); removeDir(b.dir); });
  await waitUntil(b, async () => Number(BigInt((await blockAt(b, 'finalized'))?.number ?? '0x0')) >= LAST_COMPARED, 120_000);

  const first = await compareDown(a, b, LAST_COMPARED);
  assert.ok(first < PRAGUE_BLOCK, `B followed from block ${first}, before Prague (block ${PRAGUE_BLOCK}), so it verified every fork transition`);
  assert.deepEqual(await rpc(b, 'eth_config', []), await rpc(a, 'eth_config', []), 'the same fork ids and blob schedule');
  const status = await (await fetch(`${b.baseUrl}/v1/status`)).json() as { chainId: number; network: string };
  assert.deepEqual([status.chainId, status.network], [1337, 'chain-1337']);
});

async function adminPost(node: NodeProcess, path: string, body: unknown): Promise<{ status: number; error: { code: string; message: string; details?: Record<string, unknown> } }> {
  const response = await fetch(`${node.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, error: ((await response.json()) as { error: { code: string; message: string; details?: Record<string, unknown> } }).error };
}

test('config.example.toml with exactly the README\'s "follow a real node" settings follows a devnet node: its "devnet" history source is skipped with one warning, and requests naming it get the reason', async (t) => {
  const a = await startNodeProcess({ toml: EXAMPLE });
  t.after(async () => { await a.stop(); removeDir(a.dir); });
  const { out: genesisFile } = await exportGenesis(a, []);

  // The README's settings and the genesis.json it says to export (the upstream is a devnet, not mainnet).
  const b = await startNodeProcess({ toml: EXAMPLE, sets: [...readmeSets(a), `sources.live.genesis_file=${genesisFile}`] });
  t.after(async () => { await b.stop(); removeDir(b.dir); });
  await waitUntil(b, async () => b.output.some((line) => line.includes('history source skipped')), 10_000);
  const skips = b.output.filter((line) => line.includes('history source skipped')).map((line) => JSON.parse(line) as { level: string; source: string; reason: string });
  assert.equal(skips.length, 1, b.output.join('\n'));
  assert.deepEqual([skips[0]!.level, skips[0]!.source], ['warn', 'devnet']);
  assert.match(skips[0]!.reason, /kind "devnet" serves the embedded devnet's chain, and sources\.live\.kind is "rpc"/);
  assert.ok(!a.output.some((line) => line.includes('history source skipped')), 'the devnet node uses its devnet history source');

  // B serves A's blocks, and keeps following: its finalized block moves on, each block it retains is A's.
  const finalized = async () => {
    const block = await blockAt(b, 'finalized');
    return block === null ? -1 : Number(BigInt(block.number));
  };
  await waitUntil(b, async () => await finalized() >= 0, 60_000);
  const firstFinalized = await finalized();
  await waitUntil(b, async () => await finalized() >= firstFinalized + 2, 60_000);
  const top = await finalized();
  assert.ok(await compareDown(a, b, top) < top, 'B serves more than one of A\'s blocks');

  const skipped = /^history source 'devnet' is skipped: kind "devnet" serves the embedded devnet's chain, and sources\.live\.kind is "rpc"$/;
  const requests: Array<[string, unknown]> = [
    ['/admin/v1/materialization-jobs', { processor: 'blobs', fromBlock: 0, toBlock: 0, mode: 'fill_missing', idempotencyKey: 'k', source: 'devnet' }],
    ['/admin/v1/backfill-subscriptions', { processor: 'blobs', fromBlock: 0, toBlock: 0, mode: 'fill_missing', idempotencyKey: 'k', source: 'devnet', consumer: { id: 'c' } }],
    ['/admin/v1/processors/blobs/rebuild', { idempotencyKey: 'k', source: 'devnet' }],
    ['/admin/v1/sources/devnet/probe', {}],
  ];
  for (const [path, body] of requests) {
    const answer = await adminPost(b, path, body);
    assert.deepEqual([answer.status, answer.error.code, answer.error.details], [422, 'unsupported_capability', { source: 'devnet', rule: 'history_source_skipped' }], path);
    assert.match(answer.error.message, skipped, path);
  }
  const unnamed = await adminPost(b, '/admin/v1/materialization-jobs', { processor: 'blobs', fromBlock: 0, toBlock: 0, mode: 'fill_missing', idempotencyKey: 'k2' });
  assert.deepEqual([unnamed.status, unnamed.error.code], [422, 'unsupported_capability']);
  assert.match(unnamed.error.message, /^no history source is usable \('devnet' is skipped: .*\); a materialization job needs one$/);
  assert.equal((await adminPost(b, '/admin/v1/sources/nope/probe', {})).status, 404, 'an unknown source is still not found');
});
