import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, startNodeProcess } from '../support/node-process.js';

const METRIC_LINE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? -?([0-9.e+-]+|NaN|\+Inf|-Inf)$/;

test('the node serves health, readiness and metrics, and answers every error in the spec shape', async () => {
  const node = await startNodeProcess({ sets: ['limits.max_request_body_bytes=1024'] });
  try {
    const live = await fetch(`${node.baseUrl}/health/live`);
    assert.equal(live.status, 200);
    const liveBody = await live.json() as { status: string; store: { readable: boolean; epoch: string } };
    assert.equal(liveBody.status, 'live');
    assert.match(liveBody.store.epoch, /^[0-9a-f]{16}$/);
    assert.match(live.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);

    // Readiness needs only the required lanes: an optional one (snapshots) may still be starting
    // when it first answers 200 on a loaded machine. Wait until every lane says ready.
    let ready = await fetch(`${node.baseUrl}/health/ready`);
    let readyBody = await ready.json() as { lanes: Array<{ lane: string; state: string }> };
    const allReadyBy = Date.now() + 60_000;
    while (readyBody.lanes.some((l) => l.state !== 'ready') && Date.now() < allReadyBy) {
      assert.equal(ready.status, 200, 'readiness stays 200 while an optional lane starts');
      await new Promise((resolve) => setTimeout(resolve, 50));
      ready = await fetch(`${node.baseUrl}/health/ready`);
      readyBody = await ready.json() as { lanes: Array<{ lane: string; state: string }> };
    }
    assert.equal(ready.status, 200);
    assert.deepEqual(readyBody.lanes.map((l) => [l.lane, l.state]), [['source', 'ready'], ['finality', 'ready'], ['chain', 'ready'], ['processor.blobs', 'ready'], ['outbox', 'ready'], ['snapshots', 'ready'], ['history', 'ready'], ['listener', 'ready'], ['rpc', 'ready']]);

    const metrics = await fetch(`${node.baseUrl}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await metrics.text();
    for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) assert.match(line, METRIC_LINE, `valid exposition line: ${line}`);
    assert.match(text, /chain_node_actor_mailbox_capacity\{actor="listener",lane="listener"\} 1024/);
    assert.match(text, /chain_node_actor_heap_used_bytes\{actor="listener",lane="listener"\} [1-9]\d*/);
    assert.match(text, /chain_node_lane_restarts_total\{lane="listener"\} 0/);
    assert.match(text, /chain_node_ready 1/);
    assert.match(text, /process_resident_memory_bytes \d+/);
    assert.match(text, /chain_node_http_requests_total\{route="\/health\/ready",status="200",actor="listener"\} [1-9]\d*/);

    const cases: Array<[string, RequestInit, number, string]> = [
      ['/v1/does-not-exist', {}, 404, 'not_found'],
      ['/health/live', { method: 'POST', body: '{}' }, 405, 'method_not_allowed'],
      ['/v1/x%ZZ', {}, 400, 'invalid_request'],
      ['/v1/anything', { method: 'POST', body: 'x'.repeat(4096) }, 413, 'payload_too_large'],
      ['/v1/processors/blobs/stream', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }, 405, 'method_not_allowed'],
      // A body any web page can send cross-site without a preflight creates nothing.
      ['/v1/processors/blobs/collections/blocks/query-and-follow', { method: 'POST', body: '{}' }, 415, 'unsupported_media_type'],
      ['/v1/processors/blobs/collections/blocks/query-and-follow', { method: 'POST' }, 415, 'unsupported_media_type'],
      ['/v1/processors/blobs/consumers', { method: 'POST', body: '{"id":"x"}', headers: { 'content-type': 'text/plain' } }, 415, 'unsupported_media_type'],
    ];
    for (const [path, init, status, code] of cases) {
      const response = await fetch(`${node.baseUrl}${path}`, init);
      assert.equal(response.status, status, `${init.method ?? 'GET'} ${path}`);
      const body = await response.json() as { error: { code: string; message: string; retryable: boolean; requestId: string } };
      assert.equal(body.error.code, code);
      assert.equal(typeof body.error.message, 'string');
      assert.equal(body.error.retryable, false);
      assert.equal(body.error.requestId, response.headers.get('x-request-id'), 'the body names the same request id as the header');
      if (status === 405) assert.equal(response.headers.get('allow'), 'GET', `405 names the allowed method of ${path}`);
    }
    const lines = node.output.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(lines.length > 0);
    for (const line of lines) for (const field of ['time', 'level', 'lane', 'message']) assert.ok(field in line, `log line has ${field}`);
  } finally {
    assert.equal(await node.stop('SIGTERM'), 0, 'SIGTERM stops the node with exit code 0');
    removeDir(node.dir);
  }
});

test('the data directory is locked while a node runs, and the store keeps its epoch and p2p secret across restarts', async () => {
  const first = await startNodeProcess();
  try {
    const epoch = ((await (await fetch(`${first.baseUrl}/health/live`)).json()) as { store: { epoch: string } }).store.epoch;
    const secretPath = join(first.dataDir, 'execution-p2p-secret');
    assert.equal(statSync(secretPath).mode & 0o777, 0o600, 'the p2p secret is readable by its owner only');
    const secret = readFileSync(secretPath, 'utf8').trim();
    assert.ok(!first.output.some((line) => line.includes(secret)), 'the secret never appears in the log');

    const second = await startNodeProcess({ dir: first.dir, waitReady: false });
    assert.equal(await second.exited, 1, 'a second node on the same data directory refuses to start');
    assert.match(second.output.join('\n'), /locked|lock/i);

    for (const command of ['inspect', 'verify', 'compact']) {
      const db = await runCli(['db', command, '--data-dir', first.dataDir]);
      assert.notEqual(db.code, 0, `db ${command} refuses while the node runs`);
      assert.match(db.stderr, /lock/i);
    }
    assert.equal(await first.stop('SIGINT'), 0, 'SIGINT stops the node with exit code 0');

    const inspect = await runCli(['db', 'inspect', '--data-dir', first.dataDir]);
    assert.equal(inspect.code, 0, inspect.stderr);
    const report = JSON.parse(inspect.stdout) as { storeEpoch: string; schemaVersion: number; tables: Array<{ name: string; entries: number }> };
    assert.equal(report.storeEpoch, epoch);
    assert.equal(report.schemaVersion, 1);
    assert.ok(report.tables.some((t) => t.name === 'chain.journal'));
    const verify = await runCli(['db', 'verify', '--data-dir', first.dataDir]);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    assert.equal((JSON.parse(verify.stdout) as { ok: boolean }).ok, true);
    const compact = await runCli(['db', 'compact', '--data-dir', first.dataDir]);
    assert.equal(compact.code, 0, compact.stderr);

    const restarted = await startNodeProcess({ dir: first.dir });
    try {
      const again = ((await (await fetch(`${restarted.baseUrl}/health/live`)).json()) as { store: { epoch: string } }).store.epoch;
      assert.equal(again, epoch, 'the store epoch survives restart and compaction');
      assert.equal(readFileSync(secretPath, 'utf8').trim(), secret, 'the p2p secret survives restart');
    } finally {
      assert.equal(await restarted.stop(), 0);
    }
  } finally {
    await first.stop();
    removeDir(first.dir);
  }
});
