/**
 * Helpers of the history e2e tests: a node whose on_demand processor `od` starts after the chain has history
 * (first run without it, then a restart that adds it), admin calls, and the change-log census a job must keep exact.
 */
import assert from 'node:assert/strict';
import { startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

export const FAST = ['devnet.block_time_ms=100', 'devnet.finality_lag=4', 'devnet.reorg_every=9', 'devnet.reorg_depth=2', 'finality.poll_interval_ms=100', 'runtime.shutdown_timeout_seconds=3', 'runtime.pool_threads=1'];

export interface Coverage { available: Array<{ fromBlock: number; toBlock: number; finality: string }>; finalizedThrough: number | null }

export interface Job {
  id: string; source: string; state: string; cancelRequested: boolean; fromBlock: number; toBlock: number;
  progress: { blocksDone: number; blocksTotal: number; blocksPerSecond: number | null; etaSeconds: number | null; currentChunk: { fromBlock: number; toBlock: number } | null };
  lastError: { blockNumber: number | null; message: string } | null;
}

/** The TOML of the second run: the default blobs instance, the on_demand `od` blobs instance, and `history` (sources, chunk). */
export function historyToml(sources: string, chunkBlocks: number): string {
  return [
    '[history]', `chunk_blocks = ${chunkBlocks}`, sources,
    '[[processors]]', 'id = "blobs"', 'kind = "blobs"',
    '[[processors]]', 'id = "od"', 'kind = "blobs"', 'history_mode = "on_demand"', '',
  ].join('\n');
}

/** Runs the devnet until blobs has `finalized` finalized blocks, stops, and restarts with `toml` (adding `od`). */
export async function nodeWithHistory(finalized: number, toml: string, sets: readonly string[] = []): Promise<NodeProcess> {
  const first = await startNodeProcess({ sets: FAST });
  try {
    await waitUntil(first, async () => ((await coverage(first, 'blobs')).finalizedThrough ?? 0) >= finalized, 120_000);
  } finally {
    assert.equal(await first.stop(), 0);
  }
  return startNodeProcess({ dir: first.dir, toml, sets: [...FAST, ...sets] });
}

export async function coverage(node: NodeProcess, processor: string): Promise<Coverage> {
  return ((await (await fetch(`${node.baseUrl}/v1/processors/${processor}/status`)).json()) as { coverage: Coverage }).coverage;
}

export async function admin(node: NodeProcess, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const init: RequestInit = { method };
  if (body !== undefined) Object.assign(init, { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const response = await fetch(`${node.baseUrl}${path}`, init);
  const text = await response.text();
  return { status: response.status, json: text === '' ? null : JSON.parse(text) };
}

export const JOBS = '/admin/v1/materialization-jobs';

export async function createJob(node: NodeProcess, body: Record<string, unknown>, expect = 201): Promise<Job> {
  const answer = await admin(node, 'POST', JOBS, { mode: 'fill_missing', ...body });
  assert.equal(answer.status, expect, JSON.stringify(answer.json));
  return answer.json as Job;
}

export async function job(node: NodeProcess, id: string): Promise<Job> {
  return (await admin(node, 'GET', `${JOBS}/${id}`)).json as Job;
}

export async function waitForJob(node: NodeProcess, id: string, states: readonly string[], timeoutMs = 120_000): Promise<Job> {
  let last: Job | null = null;
  await waitUntil(node, async () => {
    last = await job(node, id);
    return states.includes(last.state);
  }, timeoutMs);
  return last!;
}

/** Missing blocks of [from, to] in the coverage. */
export function missingIn(cov: Coverage, from: number, to: number): number[] {
  const missing: number[] = [];
  for (let n = from; n <= to; n += 1) if (!cov.available.some((a) => a.fromBlock <= n && n <= a.toBlock)) missing.push(n);
  return missing;
}

/** How many `blobs.block.put` apply envelopes the processor's change log holds per block number. */
export async function appliesPerBlock(node: NodeProcess, processor: string): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  let after = '';
  for (;;) {
    const page = await (await fetch(`${node.baseUrl}/v1/processors/${processor}/changes?limit=1000${after ? `&after=${after}` : ''}`)).json() as {
      data: Array<{ operation: string; kind: string; block: { number: number } }>; nextCursor: string | null;
    };
    for (const change of page.data) {
      if (change.operation === 'apply' && change.kind === 'blobs.block.put') counts.set(change.block.number, (counts.get(change.block.number) ?? 0) + 1);
    }
    if (page.data.length === 0 || page.nextCursor === null) return counts;
    after = page.nextCursor;
  }
}

/** Every block of [from, to] has exactly one apply in the log (processed once, never twice). */
export function assertOncePerBlock(counts: Map<number, number>, from: number, to: number): void {
  const wrong: string[] = [];
  for (let n = from; n <= to; n += 1) if (counts.get(n) !== 1) wrong.push(`${n}: ${counts.get(n) ?? 0}`);
  assert.deepEqual(wrong, [], `blocks ${from}-${to} each applied exactly once`);
}

/** The od instance's blob rows equal the live blobs instance's over [from, to]. */
export async function assertSameRows(node: NodeProcess, from: number, to: number): Promise<void> {
  for (let n = from; n <= to; n += 1) {
    const [live, history] = await Promise.all(['blobs', 'od'].map(async (p) => (await fetch(`${node.baseUrl}/v1/processors/${p}/query/blobs/blocks/${n}`)).text()));
    assert.equal(history, live, `block ${n}: the history row equals the live row`);
  }
}

/** The devnet producer, without reorgs, every fork active at genesis (so a follower derives the schedule from its eth_config). */
export const PRODUCER = ['devnet.block_time_ms=100', 'devnet.prague_after_seconds=0', 'devnet.osaka_after_seconds=0', 'devnet.bpo1_after_seconds=0', 'devnet.finality_lag=4', 'devnet.reorg_every=0', 'finality.poll_interval_ms=100', 'runtime.shutdown_timeout_seconds=3', 'runtime.pool_threads=1'];

/** A node following `honest`'s JSON-RPC (its recorded chain begins at that node's finalized block or `chain.max_reorg_depth` below its head), with rpc history sources. */
export function followerToml(honest: string, forked: string | null): string {
  return [
    '[sources.live]', 'kind = "rpc"', `url = "${honest}"`, 'poll_interval_ms = 100',
    '[finality]', 'kind = "rpc"', 'poll_interval_ms = 200',
    '[history]', 'chunk_blocks = 8',
    '[[sources.history]]', 'id = "honest"', 'kind = "rpc"', `url = "${honest}"`, 'source_concurrency = 2', 'batch_blocks = 4', 'max_retries = 0',
    ...(forked ? ['[[sources.history]]', 'id = "forked"', 'kind = "rpc"', `url = "${forked}"`, 'source_concurrency = 2', 'batch_blocks = 4', 'max_retries = 0'] : []),
    '[[processors]]', 'id = "blobs"', 'kind = "blobs"',
    '[[processors]]', 'id = "od"', 'kind = "blobs"', 'history_mode = "on_demand"', '',
  ].join('\n');
}

/** One JSON-RPC call's result (throws with the error object when the node answers an error). */
export async function rpcCall<T>(node: Pick<NodeProcess, 'rpcUrl'>, method: string, params: unknown[]): Promise<T> {
  const answer = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await answer.json()) as { result?: T; error?: unknown };
  if (body.error !== undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result as T;
}

export async function blockNumber(node: NodeProcess): Promise<number> {
  return Number(BigInt(await rpcCall<string>(node, 'eth_blockNumber', [])));
}

/** Balances by token ‖ holder, read by query-and-follow (one snapshot), with the reduce cursor it reflects. */
export async function balances(node: NodeProcess, processor: string): Promise<{ cursor: number | null; rows: Map<string, string> }> {
  const rows = new Map<string, string>();
  let body: Record<string, unknown> = { limit: 500 };
  let cursor: number | null | undefined;
  for (;;) {
    const response = await fetch(`${node.baseUrl}/v1/processors/${processor}/collections/balances/query-and-follow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const page = await response.json() as { data: Array<{ key: string; data: { balance: string } }>; nextCursor: string | null; coverage: { reduceCursor?: { number: number } | null } };
    assert.equal(response.status, 200, JSON.stringify(page));
    if (cursor === undefined) cursor = page.coverage.reduceCursor?.number ?? null;
    for (const entity of page.data) rows.set(entity.key, entity.data.balance);
    if (page.nextCursor === null) return { cursor, rows };
    body = { cursor: page.nextCursor, limit: 500 };
  }
}
