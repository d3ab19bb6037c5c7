/**
 * The `rpc` history source against a real JSON-RPC upstream started by the test: a node:http proxy in front of a
 * node's JSON-RPC listener (which serves every block the devnet produced), able to tamper with one block's receipts
 * and to hold answers. A tampered block (receipts no longer matching the receipts root) fails its chunk, which is
 * never marked covered, and the job names the block; cancellation stops a running job after its chunk in flight;
 * the probe reports what the upstream serves; and a clean job's rows equal live processing's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { removeDir, runCli, waitUntil } from '../support/node-process.js';
import {
  admin, appliesPerBlock, assertOncePerBlock, assertSameRows, coverage, createJob, historyToml, JOBS, missingIn, nodeWithHistory, waitForJob,
} from './history-support.js';

interface RpcRequest { id: unknown; method: string; params: unknown[] }

/** A JSON-RPC upstream in front of `target`: may tamper one block's receipts and hold answers until released. */
async function startUpstream() {
  let target = '';
  let tampered: number | null = null;
  let holding = false;
  const waiting: Array<() => void> = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => void (async () => {
      if (holding) await new Promise<void>((resolve) => waiting.push(resolve));
      const body = Buffer.concat(chunks).toString('utf8');
      const forwarded = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      let text = await forwarded.text();
      if (tampered !== null) text = tamper(body, text, tampered);
      response.writeHead(forwarded.status, { 'content-type': 'application/json' }).end(text);
    })().catch((error: Error) => response.writeHead(502).end(error.message)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    setTarget: (url: string) => { target = url; },
    tamperReceipts: (block: number | null) => { tampered = block; },
    hold: () => { holding = true; },
    get held() { return waiting.length; },
    release: () => {
      holding = false;
      for (const resolve of waiting.splice(0)) resolve();
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** Flips the first receipt's status in the answer to `eth_getBlockReceipts(block)`, wherever it is in a batch. */
function tamper(requestText: string, answerText: string, block: number): string {
  const requests = ([] as RpcRequest[]).concat(JSON.parse(requestText) as RpcRequest | RpcRequest[]);
  const ids = new Set(requests.filter((r) => r.method === 'eth_getBlockReceipts' && Number(r.params[0]) === block).map((r) => r.id));
  if (ids.size === 0) return answerText;
  const answers = JSON.parse(answerText) as Array<{ id: unknown; result: Array<{ status: string }> }>;
  for (const answer of answers) if (ids.has(answer.id)) answer.result[0]!.status = answer.result[0]!.status === '0x1' ? '0x0' : '0x1';
  return JSON.stringify(answers);
}

test('rpc history source: a block with tampered receipts fails its chunk (never covered) and the job names it; cancel stops after the chunk in flight; probe; clean jobs equal live rows', async (t) => {
  const upstream = await startUpstream();
  t.after(() => upstream.close());
  // The eth_ methods (encoding = "json"); the raw getters, the default against an upstream that serves them, are
  // tampered with and checked in cold-backfill.test.ts and history-on-demand-rpc.test.ts.
  const source = ['[[sources.history]]', 'id = "archive"', 'kind = "rpc"', `url = "${upstream.url}"`, 'source_concurrency = 2', 'batch_blocks = 3', 'max_retries = 0', 'encoding = "json"'].join('\n');
  const node = await nodeWithHistory(45, historyToml(source, 8));
  t.after(async () => { upstream.release(); await node.stop('SIGKILL'); removeDir(node.dir); });
  upstream.setTarget(node.rpcUrl);
  await waitUntil(node, async () => (await coverage(node, 'od')).finalizedThrough !== null, 60_000);
  const start = (await coverage(node, 'od')).available[0]!.fromBlock;
  assert.ok(start > 40);

  const probe = await admin(node, 'POST', '/admin/v1/sources/archive/probe');
  assert.equal(probe.status, 200, JSON.stringify(probe.json));
  assert.equal(probe.json.kind, 'rpc');
  assert.equal(probe.json.chainId, 1337);
  assert.equal(probe.json.chainIdMatches, true);
  assert.equal(probe.json.earliestBlock, 0);
  assert.ok(probe.json.latestBlock >= start);
  assert.equal(probe.json.receiptsAvailable, true);
  assert.equal(probe.json.blockEncoding, 'json');
  assert.equal(probe.json.sampleBlock.verified, true);
  assert.ok(probe.json.latencyMs > 0);

  // Block 22 is served with a receipt that does not match its header's receipts root: chunk 16-23 fails.
  upstream.tamperReceipts(22);
  const bad = await createJob(node, { processor: 'od', fromBlock: 0, toBlock: 39, idempotencyKey: 'archive' });
  const failed = await waitForJob(node, bad.id, ['completed', 'failed']);
  assert.equal(failed.state, 'failed');
  assert.equal(failed.lastError!.blockNumber, 22);
  assert.match(failed.lastError!.message, /block 22: verification failed: receiptsRoot mismatch/);
  assert.deepEqual(failed.progress.currentChunk, { fromBlock: 16, toBlock: 23 });
  // Chunks run from the top down (each linked to the verified block above): 32-39 and 24-31 committed, 16-23 failed.
  assert.deepEqual(missingIn(await coverage(node, 'od'), 0, 39), Array.from({ length: 24 }, (_, i) => i), 'the chunks above are covered; the failed chunk and those below are not');
  // A failed job is terminal: it is not retried, and the same request answers the same failed job until DELETE.
  assert.equal((await createJob(node, { processor: 'od', fromBlock: 0, toBlock: 39, idempotencyKey: 'archive' }, 200)).state, 'failed');

  // Retry after DELETE with a clean upstream that holds its answers: cancel while the chunk is in flight.
  upstream.tamperReceipts(null);
  assert.equal((await admin(node, 'DELETE', `${JOBS}/${bad.id}`)).status, 204);
  upstream.hold();
  const held = await createJob(node, { processor: 'od', fromBlock: 0, toBlock: 39, idempotencyKey: 'archive' });
  await waitUntil(node, async () => upstream.held > 0, 30_000);
  assert.equal((await admin(node, 'DELETE', `${JOBS}/${held.id}`)).status, 409, 'a running job cannot be deleted');
  const cancelling = await admin(node, 'POST', `${JOBS}/${held.id}/cancel`);
  assert.equal(cancelling.status, 200);
  assert.equal(cancelling.json.cancelRequested, true);
  upstream.release();
  const cancelled = await waitForJob(node, held.id, ['cancelled', 'completed', 'failed']);
  assert.equal(cancelled.state, 'cancelled');
  assert.deepEqual(missingIn(await coverage(node, 'od'), 0, 39), Array.from({ length: 16 }, (_, i) => i), 'the chunk in flight (16-23) committed whole; nothing below it');

  // A clean job over everything before the live start: exactly the missing blocks, once each, rows equal to live.
  const all = await createJob(node, { processor: 'od', fromBlock: 0, toBlock: start - 1, idempotencyKey: 'all' });
  assert.equal(all.progress.blocksTotal, 16 + (start - 40));
  const done = await waitForJob(node, all.id, ['completed', 'failed']);
  assert.equal(done.state, 'completed', JSON.stringify(done.lastError));
  assert.deepEqual(missingIn(await coverage(node, 'od'), 0, start), []);
  assertOncePerBlock(await appliesPerBlock(node, 'od'), 0, start - 1);
  await assertSameRows(node, 0, start - 1);

  assert.equal(await node.stop('SIGTERM'), 0);
  const verify = await runCli(['db', 'verify', '--data-dir', node.dataDir]);
  assert.equal(verify.code, 0, `db verify after history jobs:\n${verify.stdout}${verify.stderr}`);
});
