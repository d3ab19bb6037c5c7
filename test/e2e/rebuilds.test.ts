/**
 * Processor rebuilds (spec §9.5) against the real node on the devnet, one node (restarted once) for every case: a
 * rebuild of `blobs` and of `erc20` creates a replacement instance beside the serving one, backfilled from the devnet
 * history source; while it is rebuilt its queries answer 409 `processor_rebuilding` (and a second rebuild, and a
 * promote, are refused); kill -9 during the backfill resumes it after the restart; the comparison of outputs is
 * equal; promote moves a durable consumer to the replacement (old-instance cursors refused, new ones delivered from the
 * block after its acknowledged one); rollback returns processor and consumer to the old instance. Bad input and
 * idempotency in the spec's error shape.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { admin, appliesPerBlock, assertOncePerBlock, coverage, FAST, missingIn } from './history-support.js';
import { ConsumerClient, consumerBody } from './consumer-client.js';

const TOKENS = 'tokens = ["0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506", "0xc9bbd8575d55bf87fce6040031aaa9b3b4b90eae", "0x0fcde9daaf8b24c5b8f5b7b990d2489038e205bd"]';
const TOML = [
  '[history]', 'chunk_blocks = 8', '[[sources.history]]', 'id = "devnet"', 'kind = "devnet"',
  '[[processors]]', 'id = "blobs"', 'kind = "blobs"', 'start_block = 0',
  '[[processors]]', 'id = "erc20"', 'kind = "erc20"', TOKENS, 'start_block = 0', '',
].join('\n');
const CREDENTIAL = 'rebuild-consumer-credential-1';

interface Rebuild {
  id: string; processor: string; state: string; instance: string; previousInstance: string; servingInstance: string; fromBlock: number;
  progress: { instanceState: string; targetBlock: number | null; blocksDone: number; blocksTotal: number; job: string | null };
  comparison: { equal: boolean; fromBlock: number | null; toBlock: number | null; blocksCompared: number; changesCompared: number; firstDifference: unknown } | null;
  movedConsumers: Array<{ id: string; to: string; resumeAfter: string }>;
}

const rebuildPath = (processor: string, id = '') => `/admin/v1/processors/${processor}/rebuilds${id === '' ? '' : `/${id}`}`;

async function rebuild(node: NodeProcess, processor: string, id: string): Promise<Rebuild> {
  const answer = await admin(node, 'GET', rebuildPath(processor, id));
  assert.equal(answer.status, 200, JSON.stringify(answer.json));
  return answer.json as Rebuild;
}

async function waitForState(node: NodeProcess, processor: string, id: string, states: readonly string[]): Promise<Rebuild> {
  let last: Rebuild | null = null;
  await waitUntil(node, async () => states.includes((last = await rebuild(node, processor, id)).state), 120_000);
  return last!;
}

/** A query of the replacement while it is rebuilt answers 409 processor_rebuilding; proved when the rebuild was still rebuilding after the answer. */
async function assertRebuilding(node: NodeProcess, path: string, processor: string, id: string): Promise<boolean> {
  const response = await fetch(`${node.baseUrl}${path}`);
  const body = await response.json() as { error?: { code: string; retryable: boolean; details: Record<string, unknown> } };
  const after = await rebuild(node, processor, id);
  if (!['backfilling', 'comparing'].includes(after.state)) return false;
  assert.equal(response.status, 409, `${path}: ${JSON.stringify(body)}`);
  assert.equal(body.error?.code, 'processor_rebuilding');
  assert.equal(body.error?.retryable, true);
  assert.equal(body.error?.details.rebuild, id);
  return true;
}

test('rebuilds: a replacement instance backfilled beside the serving one, 409 processor_rebuilding meanwhile, resumed after kill -9, compared equal, promote moves a consumer, rollback returns', async (t) => {
  const started = Date.now();
  const mark = (what: string) => t.diagnostic(`${what} at ${((Date.now() - started) / 1000).toFixed(1)} s`);
  let node = await startNodeProcess({ toml: TOML, sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  mark('ready');
  await waitUntil(node, async () => ((await coverage(node, 'erc20')).finalizedThrough ?? 0) >= 20, 120_000);
  mark('20 blocks final');

  // A durable consumer of blobs that has acknowledged a few blocks of the serving instance.
  const consumers = () => new ConsumerClient(node.baseUrl, 'blobs');
  assert.equal((await consumers().create(consumerBody('c1', CREDENTIAL))).status, 201);
  const first = await consumers().changes('c1', CREDENTIAL, 20);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const acked = first.body.data.filter((c) => c.block !== null).at(-1)!;
  assert.equal((await consumers().ack('c1', CREDENTIAL, acked.cursor)).status, 200);

  // Bad input and unknown names, in the error shape.
  const bad = await admin(node, 'POST', '/admin/v1/processors/blobs/rebuild', { idempotencyKey: 'b', extra: 1 });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.code, 'invalid_request');
  assert.equal((await admin(node, 'POST', '/admin/v1/processors/blobs/rebuild', {})).json.error.code, 'invalid_request');
  assert.equal((await admin(node, 'POST', '/admin/v1/processors/blobs/rebuild', { idempotencyKey: 7 })).status, 400);
  assert.equal((await admin(node, 'POST', '/admin/v1/processors/nope/rebuild', { idempotencyKey: 'n' })).status, 404);
  assert.equal((await admin(node, 'POST', '/admin/v1/processors/blobs/rebuild', { idempotencyKey: 'n', source: 'nope' })).status, 404);
  assert.equal((await admin(node, 'GET', rebuildPath('blobs', 'rb-blobs-9'))).status, 404);
  assert.equal((await admin(node, 'GET', rebuildPath('blobs', '..'))).status, 404);
  assert.equal((await admin(node, 'POST', `${rebuildPath('blobs', 'rb-blobs-1')}/promote`, { acceptDifferences: 'yes' })).status, 400);

  // Create: 201 with the replacement; the same key and body 200; the key with another body 409; a second rebuild 409.
  const created = await admin(node, 'POST', '/admin/v1/processors/blobs/rebuild', { idempotencyKey: 'b' });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const b = created.json as Rebuild;
  assert.deepEqual([b.id, b.instance, b.previousInstance, b.servingInstance, b.fromBlock], ['rb-blobs-1', 'blobs~r1', 'blobs', 'blobs', 0]);
  const e = (await admin(node, 'POST', '/admin/v1/processors/erc20/rebuild', { idempotencyKey: 'e' })).json as Rebuild;
  assert.equal(e.instance, 'erc20~r1');
  assert.equal((await admin(node, 'POST', '/admin/v1/processors/blobs/rebuild', { idempotencyKey: 'b' })).status, 200);
  const reused = await admin(node, 'POST', '/admin/v1/processors/erc20/rebuild', { idempotencyKey: 'b' });
  assert.deepEqual([reused.status, reused.json.error.code], [409, 'conflict']);
  const twice = await admin(node, 'POST', '/admin/v1/processors/blobs/rebuild', { idempotencyKey: 'b2' });
  assert.deepEqual([twice.status, twice.json.error.code, twice.json.error.details.rebuild], [409, 'processor_rebuilding', 'rb-blobs-1']);

  // While rebuilding: its queries and a promote answer 409 processor_rebuilding; capabilities and status name it.
  let proved = await assertRebuilding(node, '/v1/processors/blobs~r1/status', 'blobs', b.id);
  proved = (await assertRebuilding(node, '/v1/processors/erc20~r1/query/erc20/balances/0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506/0x0000000000000000000000000000000000000001', 'erc20', e.id)) || proved;
  const promoteEarly = await admin(node, 'POST', `${rebuildPath('blobs', b.id)}/promote`);
  if (['backfilling', 'comparing'].includes((await rebuild(node, 'blobs', b.id)).state)) assert.equal(promoteEarly.json.error.code, 'processor_rebuilding');
  const capabilities = await (await fetch(`${node.baseUrl}/v1/capabilities`)).json() as { processors: Array<{ id: string; instance: string; rebuilding?: { instance: string } }> };
  assert.equal(capabilities.processors.find((p) => p.id === 'blobs')?.rebuilding?.instance, 'blobs~r1');
  // node_getCapabilities is the same document, built per call: the rebuild started after the rpc lane did shows in it.
  const rpcAnswer = await (await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'node_getCapabilities', params: [] }) })).json() as { result: typeof capabilities };
  assert.equal(rpcAnswer.result.processors.find((p) => p.id === 'blobs')?.rebuilding?.instance, 'blobs~r1');
  const status = await (await fetch(`${node.baseUrl}/v1/processors/blobs/status`)).json() as { processor: { instance: string }; rebuilds: Array<{ instance: string; coverage: unknown }> };
  assert.equal(status.processor.instance, 'blobs', 'the serving instance serves while its replacement is rebuilt');
  assert.equal(status.rebuilds[0]?.instance, 'blobs~r1');
  t.diagnostic(`409 processor_rebuilding observed while rebuilding: ${proved}`);

  // kill -9 once the replacement has committed part of its backfill; the restart resumes it.
  await waitUntil(node, async () => (await rebuild(node, 'blobs', b.id)).progress.blocksDone > 0, 60_000);
  const atKill = await rebuild(node, 'blobs', b.id);
  await node.stop('SIGKILL');
  mark('killed');
  node = await startNodeProcess({ dir: node.dir, toml: TOML, sets: FAST });
  mark('restarted');
  t.diagnostic(`killed with ${atKill.progress.blocksDone}/${atKill.progress.blocksTotal} blocks backfilled (${atKill.state})`);
  const readyB = await waitForState(node, 'blobs', b.id, ['ready', 'failed']);
  const readyE = await waitForState(node, 'erc20', e.id, ['ready', 'failed']);
  for (const ready of [readyB, readyE]) {
    assert.equal(ready.state, 'ready', JSON.stringify(ready));
    assert.equal(ready.comparison?.equal, true, JSON.stringify(ready.comparison));
    assert.equal(ready.comparison?.fromBlock, 0);
    // The comparison reaches past the backfill's target: the replacement's first live block (where blobs writes its
    // fork-schedule rows) is final before outputs are compared, or they would be outputs only one instance has.
    assert.ok((ready.comparison?.toBlock ?? 0) > ready.progress.targetBlock!, JSON.stringify(ready.comparison));
    assert.equal(ready.progress.blocksDone, ready.progress.blocksTotal);
  }
  mark('both compared');
  const target = readyB.progress.targetBlock!;
  const replacementCoverage = await coverage(node, 'blobs~r1');
  assert.deepEqual(missingIn(replacementCoverage, 0, target + 1), [], JSON.stringify(replacementCoverage.available));
  assertOncePerBlock(await appliesPerBlock(node, 'blobs~r1'), 0, target);
  for (const n of [0, Math.floor(target / 2), target]) {
    const [serving, replacement] = await Promise.all(['blobs', 'blobs~r1'].map(async (p) => (await fetch(`${node.baseUrl}/v1/processors/${p}/query/blobs/blocks/${n}`)).text()));
    assert.equal(replacement, serving, `block ${n}: the replacement's row equals the serving instance's`);
  }

  // Promote: the replacement serves the processor (status, capabilities, the alias route) and the consumer moved to it.
  const promoted = await admin(node, 'POST', `${rebuildPath('blobs', b.id)}/promote`);
  assert.equal(promoted.status, 200, JSON.stringify(promoted.json));
  assert.equal(promoted.json.state, 'promoted');
  assert.equal(promoted.json.servingInstance, 'blobs~r1');
  assert.deepEqual(promoted.json.movedConsumers.map((m: { id: string; to: string }) => [m.id, m.to]), [['c1', 'blobs~r1']]);
  assert.equal((await admin(node, 'POST', `${rebuildPath('blobs', b.id)}/promote`)).status, 200, 'promote is idempotent');
  assert.equal(((await (await fetch(`${node.baseUrl}/v1/processors/blobs/status`)).json()) as { processor: { instance: string } }).processor.instance, 'blobs~r1');
  const caps = await (await fetch(`${node.baseUrl}/v1/capabilities`)).json() as { processors: Array<{ id: string; instance: string; rebuilding?: unknown }> };
  assert.deepEqual(caps.processors.map((p) => [p.id, p.instance, p.rebuilding !== undefined]), [['blobs', 'blobs~r1', false], ['erc20', 'erc20', true]]);
  const moved = await consumers().changes('c1', CREDENTIAL, 50);
  assert.equal(moved.status, 200, JSON.stringify(moved.body));
  assert.ok(moved.body.data.length > 0);
  const firstBlock = moved.body.data.find((c) => c.block !== null)!.block!.number;
  assert.ok(firstBlock > acked.block!.number || moved.body.data[0]!.sequence === String(BigInt(promoted.json.movedConsumers[0].resumeAfter) + 1n),
    `the moved consumer resumes after its acknowledged block ${acked.block!.number} (first delivered block ${firstBlock})`);
  const stale = await consumers().ack('c1', CREDENTIAL, acked.cursor);
  assert.ok(stale.status >= 400, 'a cursor of the old instance is refused');
  assert.equal(stale.body.error.code, 'reset_required', JSON.stringify(stale.body));
  assert.equal((await consumers().ack('c1', CREDENTIAL, moved.body.data.at(-1)!.cursor)).status, 200, 'a cursor of the replacement is acknowledged');

  // Rollback: the old instance (which kept following the chain) serves again; the consumer is back on it.
  const rolled = await admin(node, 'POST', `${rebuildPath('blobs', b.id)}/rollback`);
  assert.equal(rolled.status, 200, JSON.stringify(rolled.json));
  assert.deepEqual([rolled.json.state, rolled.json.servingInstance], ['rolled_back', 'blobs']);
  assert.equal(((await (await fetch(`${node.baseUrl}/v1/processors/blobs/status`)).json()) as { processor: { instance: string } }).processor.instance, 'blobs');
  const back = await consumers().get('c1', CREDENTIAL);
  assert.equal((back.body as unknown as { instance: string }).instance, 'blobs');
  assert.ok(BigInt(back.body.acknowledged.sequence) > 0n, 'moved back, the consumer keeps the blocks it acknowledged on the replacement');
  assert.equal(rolled.json.movedConsumers[0].resumeAfter, back.body.acknowledged.sequence);
  const again = await consumers().changes('c1', CREDENTIAL, 10);
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal((await admin(node, 'POST', `${rebuildPath('blobs', b.id)}/rollback`)).status, 200, 'rollback is idempotent');
  mark('rolled back');
  const list = await admin(node, 'GET', rebuildPath('blobs'));
  assert.deepEqual(list.json.data.map((r: Rebuild) => [r.id, r.state]), [['rb-blobs-1', 'rolled_back']]);
});
