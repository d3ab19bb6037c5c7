/**
 * Answers at the edges of the HTTP surface, against the real node (issue 28, point 5): a path parameter too long
 * for any identifier (a processor id, a consumer id on get/changes/lease/ack/delete) is a 404 in the error shape —
 * it used to be a 500 from LMDB's key limit — and a 429 (an open snapshot over `snapshots.max_active`) says when to
 * come back with `Retry-After`. Every answer carries its request id in `x-request-id` as well as in the body.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startNodeProcess, waitUntil } from '../support/node-process.js';

interface ErrorBody { error: { code: string; message: string; retryable: boolean; requestId: string; details?: Record<string, unknown> } }

async function call(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: ErrorBody }> {
  const response = await fetch(url, init);
  return { status: response.status, headers: response.headers, body: (await response.json()) as ErrorBody };
}

function assertError(answer: { status: number; headers: Headers; body: ErrorBody }, status: number, code: string, label: string): void {
  assert.equal(answer.status, status, `${label}: ${JSON.stringify(answer.body)}`);
  assert.equal(answer.body.error.code, code, label);
  assert.equal(typeof answer.body.error.message, 'string', label);
  assert.equal(typeof answer.body.error.retryable, 'boolean', label);
  assert.equal(answer.headers.get('x-request-id'), answer.body.error.requestId, `${label}: the header carries the body's request id`);
}

const JSON_POST = { method: 'POST', headers: { 'content-type': 'application/json' } } as const;

test('over-long path parameters answer 404, and a 429 carries Retry-After, each with x-request-id', async (t) => {
  const node = await startNodeProcess({ sets: ['devnet.block_time_ms=200', 'snapshots.max_active=1', 'runtime.pool_threads=1'] });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  const base = node.baseUrl;

  // The lengths the adversarial run found at the edge (4,075 answered 404, 4,076 a 500), and one far past it.
  for (const length of [513, 4_075, 4_076, 6_000]) {
    const long = 'p'.repeat(length);
    assertError(await call(`${base}/v1/processors/${long}/status`), 404, 'not_found', `processor id of ${length}`);
    const consumer = `${base}/v1/processors/blobs/consumers/${'c'.repeat(length)}`;
    assertError(await call(consumer), 404, 'not_found', `consumer get, ${length}`);
    assertError(await call(`${consumer}/changes`), 404, 'not_found', `consumer changes, ${length}`);
    assertError(await call(`${consumer}/lease`, { ...JSON_POST, body: '{}' }), 404, 'not_found', `consumer lease, ${length}`);
    assertError(await call(`${consumer}/ack`, { ...JSON_POST, body: JSON.stringify({ cursor: 'AAAA' }) }), 404, 'not_found', `consumer ack, ${length}`);
    assertError(await call(consumer, { method: 'DELETE' }), 404, 'not_found', `consumer delete, ${length}`);
    assertError(await call(`${base}/admin/v1/materialization-jobs/${'j'.repeat(length)}`), 404, 'not_found', `job id of ${length}`);
  }
  // A multi-byte parameter is bounded by its bytes, not its characters.
  assertError(await call(`${base}/v1/processors/${encodeURIComponent('é'.repeat(300))}/status`), 404, 'not_found', '600 bytes of é');
  // Ids of ordinary length still answer as before.
  assertError(await call(`${base}/v1/processors/${'p'.repeat(128)}/status`), 404, 'not_found', 'unknown processor');
  assert.equal((await fetch(`${base}/v1/processors/blobs/status`)).status, 200);

  // snapshots.max_active = 1: the second open snapshot is refused with 429, retryable, saying when to retry.
  await waitUntil(node, async () => ((await (await fetch(`${base}/v1/status`)).json()) as { head: { number: number } | null }).head?.number! >= 4, 60_000);
  const snapshot = `${base}/v1/processors/blobs/collections/blocks/query-and-follow`;
  const first = await fetch(snapshot, { ...JSON_POST, body: JSON.stringify({ limit: 1 }) });
  assert.equal(first.status, 200, await first.text());
  const second = await call(snapshot, { ...JSON_POST, body: JSON.stringify({ limit: 1 }) });
  assertError(second, 429, 'query_too_expensive', 'second snapshot');
  assert.equal(second.body.error.retryable, true);
  assert.match(second.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/, 'Retry-After in whole seconds');

  // Nothing above broke the node: still ready, no lane restarted.
  assert.equal((await fetch(`${base}/health/ready`)).status, 200);
  assert.ok(!node.output.some((line) => line.includes('"level":"error"')), node.output.filter((line) => line.includes('"level":"error"')).join('\n'));
});
