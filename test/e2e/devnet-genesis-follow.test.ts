/**
 * Two real nodes: A runs `npm start`'s config on its devnet; `chain-node devnet genesis` exports that devnet's
 * genesis.json; B follows A over JSON-RPC with it (`finality.kind = "rpc"`) and serves A's blocks. Without the file
 * B refuses to start and names the command. The devnet is paced at two blocks a second (one second of block time
 * each) with Prague, Osaka and BPO1 at blocks 60, 64 and 68 — after B starts following (at A's head then) — so B
 * verifies blocks across every fork transition (the export takes the same `--set`s as A).
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

function followerSets(upstream: NodeProcess): string[] {
  return ['sources.live.kind=rpc', `sources.live.url=${upstream.rpcUrl}`, 'sources.live.poll_interval_ms=200', 'finality.kind=rpc', 'finality.poll_interval_ms=200', 'sources.history=[]'];
}

test('a node follows a devnet node over JSON-RPC with the genesis.json `chain-node devnet genesis` exports, and serves the same blocks', async (t) => {
  const a = await startNodeProcess({ toml: EXAMPLE, sets: DEVNET });
  t.after(async () => { await a.stop(); removeDir(a.dir); });

  const refused = await startNodeProcess({ toml: EXAMPLE, waitReady: false, sets: followerSets(a) });
  t.after(() => removeDir(refused.dir));
  assert.equal(await refused.exited, 1);
  assert.match(refused.output.join('\n'), /sources\.live\.genesis_file.*chain-node devnet genesis --config/s);

  const genesisFile = join(a.dir, 'devnet-genesis.json');
  const exported = await runCli(['devnet', 'genesis', '--config', a.configFile, ...DEVNET.flatMap((set) => ['--set', set]), '--out', genesisFile]);
  assert.equal(exported.code, 0, exported.stderr);
  const summary = JSON.parse(exported.stdout) as { out: string; chainId: number; genesisHash: string; forkTimes: Record<string, number> };
  assert.equal(summary.out, genesisFile);
  assert.equal(summary.genesisHash, (await blockAt(a, '0x0'))!.hash, "the file's genesis is A's block 0");
  assert.deepEqual(summary.forkTimes, { shanghai: 1_700_000_000, cancun: 1_700_000_000, prague: 1_700_000_060, osaka: 1_700_000_064, bpo1: 1_700_000_068 });

  const b = await startNodeProcess({ toml: EXAMPLE, sets: [...followerSets(a), `sources.live.genesis_file=${genesisFile}`] });
  t.after(async () => { await b.stop(); removeDir(b.dir); });
  await waitUntil(b, async () => Number(BigInt((await blockAt(b, 'finalized'))?.number ?? '0x0')) >= LAST_COMPARED, 120_000);

  let first = LAST_COMPARED;
  for (let n = LAST_COMPARED; n >= 0; n--) {
    const ours = await retainedBlock(b, n);
    if (ours === null) break;
    assert.equal(ours.hash, (await blockAt(a, `0x${n.toString(16)}`))!.hash, `block ${n}`);
    first = n;
  }
  assert.ok(first < PRAGUE_BLOCK, `B followed from block ${first}, before Prague (block ${PRAGUE_BLOCK}), so it verified every fork transition`);
  assert.deepEqual(await rpc(b, 'eth_config', []), await rpc(a, 'eth_config', []), 'the same fork ids and blob schedule');
  const status = await (await fetch(`${b.baseUrl}/v1/status`)).json() as { chainId: number; network: string };
  assert.deepEqual([status.chainId, status.network], [1337, 'chain-1337']);
});
