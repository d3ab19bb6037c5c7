/**
 * Processor artifacts through the real node on a fast devnet (spec §2.9, §4.5, §7.2 rule 8, §8 `[budgets.artifacts]`):
 * the routes answer status, one block and paged exports; replaying retained artifacts into a replay target gives the
 * same output as live processing (erc20: every change of every block; blobs: the same entity rows); window retention
 * drops only the instance's claim, a pin keeps the record until it is released; two nodes on the same chain export the
 * same digest; a block whose artifact passes the budget is not committed at all and the lane resumes after a release.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';

const FAST = ['devnet.block_time_ms=150', 'devnet.reorg_every=6', 'devnet.reorg_depth=2', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'retention.prune_interval_seconds=1'];
const TOKENS = 'tokens = "*"';

interface ArtifactStatus {
  retained: { fromBlock: number; toBlock: number } | null;
  retainedCount: number;
  retainedBytes: string;
  complete: boolean;
  pending: { count: number; bytes: string };
  finalizedThrough: number | null;
  admission: { blocked: boolean; reason: string | null };
}

interface Envelope { operation: string; block: { number: number; hash: string } | null; kind: string; key: string | null; data: Record<string, unknown> | null }

async function json<T>(response: Promise<Response> | Response, status: number): Promise<T> {
  const answer = await response;
  const text = await answer.text();
  assert.equal(answer.status, status, text);
  return JSON.parse(text) as T;
}

const artifactStatus = (node: NodeProcess, processor: string) => json<ArtifactStatus>(fetch(`${node.baseUrl}/v1/processors/${processor}/artifacts/status`), 200);

function post(node: NodeProcess, path: string, body: unknown): Promise<Response> {
  return fetch(`${node.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** Every change of a processor, oldest first. */
async function allChanges(node: NodeProcess, processor: string): Promise<Envelope[]> {
  const out: Envelope[] = [];
  let after = '';
  for (;;) {
    const page = await json<{ data: Envelope[]; nextCursor: string | null }>(fetch(`${node.baseUrl}/v1/processors/${processor}/changes?limit=1000${after ? `&after=${after}` : ''}`), 200);
    out.push(...page.data);
    if (page.data.length === 0 || page.nextCursor === null) return out;
    after = page.nextCursor;
  }
}

/** The apply changes of each block's given hash (a reorged block's earlier hash is left out), finality left out. */
function appliedByBlock(changes: readonly Envelope[], hashes: ReadonlyMap<number, string>): Map<number, string[]> {
  const byBlock = new Map<number, string[]>();
  for (const change of changes) {
    if (change.operation !== 'apply' || change.block === null || hashes.get(change.block.number) !== change.block.hash) continue;
    const { finality: _finality, ...data } = change.data ?? {};
    const list = byBlock.get(change.block.number) ?? [];
    list.push(JSON.stringify({ kind: change.kind, key: change.key, data }));
    byBlock.set(change.block.number, list);
  }
  return byBlock;
}

let node: NodeProcess;
/** A second node on the same chain with a small `[budgets.artifacts]`, started beside the first (two runs of one chain). */
let small: NodeProcess;
const SMALL_TOML = ['[[processors]]', 'id = "erc20"', 'kind = "erc20"', TOKENS, '[processors.artifacts]', 'retention = "full"', '[budgets.artifacts]', 'max_bytes = 50000', ''].join('\n');

before(async () => {
  const toml = [
    '[[processors]]', 'id = "erc20"', 'kind = "erc20"', TOKENS, 'checkpoint_every_blocks = 2', 'checkpoints_retained = 1', '[processors.artifacts]', 'retention = "full"',
    '[[processors]]', 'id = "erc20-replay"', 'kind = "erc20"', TOKENS, '[processors.artifacts]', 'replay_from = "erc20"',
    '[[processors]]', 'id = "blobs"', 'kind = "blobs"', 'retain_changes = 20', '[processors.artifacts]', 'retention = "window"', 'window_blocks = 16',
    '[[processors]]', 'id = "blobs-replay"', 'kind = "blobs"', '[processors.artifacts]', 'replay_from = "blobs"', '',
  ].join('\n');
  const started = await Promise.allSettled([startNodeProcess({ toml, sets: FAST, readyTimeoutMs: 120_000 }), startNodeProcess({ toml: SMALL_TOML, sets: FAST, readyTimeoutMs: 120_000 })]);
  [node, small] = started.map((result) => (result.status === 'fulfilled' ? result.value : undefined)) as [NodeProcess, NodeProcess];
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  await waitUntil(node, async () => {
    const [erc20, blobs] = await Promise.all([artifactStatus(node, 'erc20'), artifactStatus(node, 'blobs')]);
    return (erc20.finalizedThrough ?? 0) >= 12 && blobs.retainedCount >= 8;
  }, 120_000);
});

after(async () => {
  for (const started of [node, small]) {
    if (!started) continue;
    await started.stop();
    removeDir(started.dir);
  }
});

test('artifact routes: status and one block of a retaining processor, paged exports with digest and completeness headers, spec errors for the rest', async () => {
  const status = await artifactStatus(node, 'erc20');
  assert.ok(status.retained && status.complete, JSON.stringify(status));
  assert.match(status.retainedBytes, /^[1-9][0-9]*$/);
  assert.equal(status.admission.blocked, false);

  const one = await json<{ blockNumber: number; blockHash: string; checksum: string; finality: string; owners: unknown[]; payload: unknown; deltaSchema: string }>(fetch(`${node.baseUrl}/v1/processors/erc20/artifacts/5`), 200);
  assert.equal(one.blockNumber, 5);
  assert.equal(one.finality, 'finalized');
  assert.match(one.checksum, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(one.owners, [{ ownerKind: 'processor' }]);
  assert.equal(one.deltaSchema, 'erc20.deltas@1.0.0');
  assert.ok(typeof one.payload === 'object' && one.payload !== null && '$map' in one.payload, 'the decoded deltas: a map of balance changes');

  const { fromBlock } = status.retained!;
  const first = await fetch(`${node.baseUrl}/v1/processors/erc20/artifacts/export?fromBlock=${fromBlock}&toBlock=${fromBlock + 4}&limit=3`);
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('content-type'), 'application/vnd.node.processor-artifacts');
  assert.equal(first.headers.get('x-node-artifact-complete'), 'false', 'another page is needed');
  assert.equal(first.headers.get('x-node-artifact-next-from-block'), String(fromBlock + 3));
  assert.match(first.headers.get('x-node-artifact-digest') ?? '', /^sha256:[0-9a-f]{64}$/);
  const lines = (await first.text()).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(lines.length, 4, 'a header line and three artifacts');
  assert.deepEqual(lines.slice(1).map((line) => line.blockNumber), [fromBlock, fromBlock + 1, fromBlock + 2]);
  const rest = await fetch(`${node.baseUrl}/v1/processors/erc20/artifacts/export?fromBlock=${fromBlock + 3}&toBlock=${fromBlock + 4}&limit=3`);
  assert.equal(rest.headers.get('x-node-artifact-complete'), 'true');
  await rest.body?.cancel();
  const again = await fetch(`${node.baseUrl}/v1/processors/erc20/artifacts/export?fromBlock=${fromBlock}&toBlock=${fromBlock + 4}&limit=3`);
  assert.equal(again.headers.get('x-node-artifact-digest'), first.headers.get('x-node-artifact-digest'), 'the same page, the same digest');
  await again.body?.cancel();

  const expectError = async (response: Promise<Response>, status: number, code: string) => {
    const body = await json<{ error: { code: string; requestId: string } }>(response, status);
    assert.equal(body.error.code, code);
    assert.ok(body.error.requestId);
  };
  await expectError(fetch(`${node.baseUrl}/v1/processors/erc20-replay/artifacts/status`), 409, 'output_not_retained');
  await expectError(fetch(`${node.baseUrl}/v1/processors/erc20/artifacts/999999999`), 404, 'not_found');
  await expectError(fetch(`${node.baseUrl}/v1/processors/erc20/artifacts/-1`), 400, 'invalid_request');
  await expectError(fetch(`${node.baseUrl}/v1/processors/erc20/artifacts/export?fromBlock=9&toBlock=2`), 400, 'invalid_request');
  await expectError(fetch(`${node.baseUrl}/v1/processors/erc20/artifacts/export?limit=100000000`), 413, 'query_too_expensive');
  await expectError(fetch(`${node.baseUrl}/v1/processors/nope/artifacts/status`), 404, 'not_found');
  await expectError(post(node, '/admin/v1/processors/erc20/artifacts/replay', { targetProcessor: 'blobs-replay', fromBlock: 0, toBlock: 1 }), 422, 'unsupported_capability');
  await expectError(post(node, '/admin/v1/processors/erc20/artifacts/replay', { targetProcessor: 'erc20', fromBlock: 0, toBlock: 1 }), 400, 'invalid_request');
  await expectError(post(node, '/admin/v1/processors/erc20/artifacts/replay', { targetProcessor: 'erc20-replay', fromBlock: 3, toBlock: 1 }), 400, 'invalid_request');
  await expectError(fetch(`${node.baseUrl}/admin/v1/processors/erc20/artifacts?ownerKind=operator_pin`, { method: 'DELETE' }), 400, 'invalid_request');

  const capabilities = await json<{ processors: Array<{ id: string; artifactRetention: string }> }>(fetch(`${node.baseUrl}/v1/capabilities`), 200);
  assert.deepEqual(Object.fromEntries(capabilities.processors.map((p) => [p.id, p.artifactRetention])), { erc20: 'full', 'erc20-replay': 'none', blobs: 'window', 'blobs-replay': 'none' });
  const metrics = await (await fetch(`${node.baseUrl}/metrics`)).text();
  assert.match(metrics, /^chain_node_artifact_bytes\{processor="erc20",state="retained"\} [1-9]/m);
  assert.match(metrics, /^chain_node_artifact_budget_bytes 1073741824$/m);
});

test('replaying erc20 artifacts into a replay target publishes, block by block, the changes live processing published (its state equals processing the blocks)', async () => {
  const through = (await artifactStatus(node, 'erc20')).retained!.toBlock;
  const start = (await artifactStatus(node, 'erc20')).retained!.fromBlock;
  const wrongStart = await post(node, '/admin/v1/processors/erc20/artifacts/replay', { targetProcessor: 'erc20-replay', fromBlock: start + 1, toBlock: through });
  assert.equal(wrongStart.status, 409, 'an ordered-state target starts where the source started');
  await wrongStart.body?.cancel();
  let from = start;
  for (;;) {
    const result = await json<{ replayed: number; nextFromBlock: number | null; complete: boolean }>(post(node, '/admin/v1/processors/erc20/artifacts/replay', { targetProcessor: 'erc20-replay', fromBlock: from, toBlock: through, limit: 5 }), 200);
    assert.ok(result.replayed > 0);
    if (result.complete) break;
    from = result.nextFromBlock!;
  }
  const hashes = new Map<number, string>();
  for (let n = start; n <= through; n += 1) hashes.set(n, (await json<{ blockHash: string }>(fetch(`${node.baseUrl}/v1/processors/erc20/artifacts/${n}`), 200)).blockHash);
  const live = appliedByBlock(await allChanges(node, 'erc20'), hashes);
  const replayed = appliedByBlock(await allChanges(node, 'erc20-replay'), hashes);
  assert.ok([...replayed.values()].flat().length > 0, 'the blocks moved balances');
  for (let n = start; n <= through; n += 1) assert.deepEqual(replayed.get(n) ?? [], live.get(n) ?? [], `block ${n}`);
  const coverage = (await json<{ coverage: { processedThrough: number; reduceCursor: { number: number; hash: string } } }>(fetch(`${node.baseUrl}/v1/processors/erc20-replay/status`), 200)).coverage;
  assert.deepEqual(coverage.reduceCursor, { number: through, hash: hashes.get(through) });
});

test('replaying blobs artifacts writes the entity rows live processing wrote', async () => {
  const { retained } = await artifactStatus(node, 'blobs');
  const range = { fromBlock: retained!.fromBlock + 2, toBlock: retained!.fromBlock + 6 };
  const result = await json<{ replayed: number; complete: boolean }>(post(node, '/admin/v1/processors/blobs/artifacts/replay', { targetProcessor: 'blobs-replay', ...range }), 200);
  assert.deepEqual([result.replayed, result.complete], [5, true]);
  for (const collection of ['blocks', 'transactions']) {
    const rows = async (processor: string) => (await json<{ data: Array<{ key: string; data: unknown }> }>(fetch(`${node.baseUrl}/v1/processors/${processor}/collections/${collection}/entities?fromBlock=${range.fromBlock}&toBlock=${range.toBlock}&limit=1000`), 200)).data.map((row) => [row.key, row.data]);
    const [live, replayed] = [await rows('blobs'), await rows('blobs-replay')];
    if (collection === 'blocks') assert.equal(live.length, 5);
    assert.deepEqual(replayed, live, collection);
  }
});

test('window retention drops the instance claim below the window; a pin keeps its record until the pin is released; pruning changes and checkpoints deletes no artifact', async () => {
  const before = await artifactStatus(node, 'blobs');
  const pinned = before.retained!.fromBlock + 4;
  const pin = await json<{ pinned: number }>(post(node, '/admin/v1/processors/blobs/artifacts/pins', { ownerId: 'keep', fromBlock: pinned, toBlock: pinned + 1 }), 200);
  assert.equal(pin.pinned, 2);
  // The window moves past the pinned blocks.
  await waitUntil(node, async () => (await artifactStatus(node, 'blobs')).retained!.fromBlock === pinned && ((await artifactStatus(node, 'blobs')).finalizedThrough ?? 0) > pinned + 20, 60_000);
  const kept = await json<{ owners: unknown[] }>(fetch(`${node.baseUrl}/v1/processors/blobs/artifacts/${pinned}`), 200);
  assert.deepEqual(kept.owners, [{ ownerKind: 'operator_pin', ownerId: 'keep' }], 'only the pin claims it now');
  const gone = await fetch(`${node.baseUrl}/v1/processors/blobs/artifacts/${pinned + 2}`);
  assert.equal(gone.status, 409, 'outside the window, unpinned');
  await gone.body?.cancel();
  const released = await json<{ released: number; deleted: number }>(fetch(`${node.baseUrl}/admin/v1/processors/blobs/artifacts?ownerKind=operator_pin&ownerId=keep&fromBlock=${pinned}&toBlock=${pinned}`, { method: 'DELETE' }), 200);
  assert.deepEqual([released.released, released.deleted], [1, 1]);
  assert.equal((await artifactStatus(node, 'blobs')).retained!.fromBlock, pinned + 1, 'the other pinned block stays');

  // erc20 prunes checkpoints every 2 blocks and blobs its change log to 20 changes: no artifact goes with them.
  const erc20 = await artifactStatus(node, 'erc20');
  assert.ok(erc20.complete && erc20.retained!.fromBlock <= 1, JSON.stringify(erc20));
  const checkpoints = await json<{ data: unknown[] }>(fetch(`${node.baseUrl}/v1/processors/erc20/checkpoints`), 200);
  assert.equal(checkpoints.data.length, 1);
});

test('two nodes on the same chain export the same digest; over [budgets.artifacts] a block commits nothing until a release makes room', async () => {
  let blocked: ArtifactStatus | null = null;
  await waitUntil(small, async () => {
    const status = await artifactStatus(small, 'erc20');
    if (!status.admission.blocked) return false;
    blocked = status;
    return true;
  }, 120_000);
  const reason = blocked!.admission.reason!;
  const failedBlock = Number(/artifact of block (\d+)/.exec(reason)?.[1]);
  const processor = await json<{ coverage: { state: string; processedThrough: number; reduceCursor: { number: number } } }>(fetch(`${small.baseUrl}/v1/processors/erc20/status`), 200);
  assert.equal(processor.coverage.state, 'degraded');
  assert.equal(processor.coverage.reduceCursor.number, failedBlock - 1, 'the block whose artifact did not fit was not reduced');
  assert.equal(processor.coverage.processedThrough, failedBlock - 1, 'nor covered');
  const changes = await allChanges(small, 'erc20');
  assert.ok(changes.every((change) => change.block === null || change.block.number < failedBlock), 'nor published');
  assert.ok(BigInt(blocked!.retainedBytes) + BigInt(blocked!.pending.bytes) <= 50_000n);

  const range = `fromBlock=0&toBlock=${Math.min(blocked!.retained!.toBlock, 6)}`;
  const [a, b] = await Promise.all([fetch(`${node.baseUrl}/v1/processors/erc20/artifacts/export?${range}`), fetch(`${small.baseUrl}/v1/processors/erc20/artifacts/export?${range}`)]);
  assert.equal(a.headers.get('x-node-artifact-complete'), 'true');
  assert.equal(b.headers.get('x-node-artifact-digest'), a.headers.get('x-node-artifact-digest'));
  assert.equal(await b.text(), await a.text());

  const release = await json<{ deleted: number; freedBytes: string }>(fetch(`${small.baseUrl}/admin/v1/processors/erc20/artifacts?fromBlock=0&toBlock=${blocked!.retained!.toBlock}`, { method: 'DELETE' }), 200);
  assert.ok(release.deleted > 0 && BigInt(release.freedBytes) > 0n);
  await waitUntil(small, async () => (await json<{ coverage: { processedThrough: number } }>(fetch(`${small.baseUrl}/v1/processors/erc20/status`), 200)).coverage.processedThrough >= failedBlock, 60_000);
});
