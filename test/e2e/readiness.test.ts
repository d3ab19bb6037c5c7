import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../actors/node/config.js';
import { startNode } from '../../actors/node/main.js';
import { createLogger } from '../../runtime/log.js';
import { freePort } from '../support/ports.js';
import { child, lane } from '../runtime/helpers.js';

test('a lane that exceeds its restart intensity makes /health/ready answer 503 with the reason, and metrics count it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-ready-'));
  const port = await freePort();
  writeFileSync(join(dir, 'node.toml'), `data_dir = "data"\n[listeners]\napi = "127.0.0.1:${port}"\nrpc_http = "127.0.0.1:${await freePort()}"\nrpc_ws = "127.0.0.1:${await freePort()}"\n[log]\nlevel = "silent"\n`);
  const node = await startNode(loadConfig(join(dir, 'node.toml')), {
    log: createLogger({ lane: 'node', level: 'silent', maxLinesPerSecond: 10 }),
    extraLanes: [lane('upstream', [child('upstream', 'crash-on-start')], { intensity: 2, periodMs: 60_000, backoffInitialMs: 10 })],
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    let body: { status: string; reasons: string[]; lanes: Array<{ lane: string; state: string; failedReason: string | null }> } | undefined;
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const response = await fetch(`${base}/health/ready`);
        body = await response.json() as typeof body;
        if (body!.lanes.find((l) => l.lane === 'upstream')?.state === 'failed') {
          assert.equal(response.status, 503);
          break;
        }
      } catch {
        // listener still starting
      }
      if (Date.now() > deadline) throw new Error(`lane never failed: ${JSON.stringify(body)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(body!.status, 'not_ready');
    assert.match(body!.reasons.join('\n'), /lane 'upstream' is failed: restart intensity exceeded: 3 restarts .*the upstream refused on purpose/);
    assert.equal(body!.lanes.find((l) => l.lane === 'listener')?.state, 'ready', 'the listener keeps serving');
    // Readiness and the metrics are separate reads of the lane's state: wait for the metrics to show the failure too.
    const metrics = await metricsMatching(base, [/chain_node_lane_escalations_total\{lane="upstream"\} 1/, /chain_node_lane_state\{lane="upstream",state="failed"\} 1/, /chain_node_ready 0/]);
    assert.match(metrics, /chain_node_lane_escalations_total\{lane="upstream"\} 1/);
    assert.match(metrics, /chain_node_lane_restarts_total\{lane="upstream"\} 2/);
    assert.match(metrics, /chain_node_lane_state\{lane="upstream",state="failed"\} 1/);
    assert.match(metrics, /chain_node_ready 0/);

    const keepAlive = await fetch(`${base}/health/live`);
    assert.equal(keepAlive.status, 200);
    await node.system.kill('listener');
    const back = Date.now() + 60_000;
    while ((await fetch(`${base}/health/live`).catch(() => null))?.status !== 200) {
      if (Date.now() > back) throw new Error('the listener did not come back');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const after = await metricsMatching(base, [/chain_node_lane_restarts_total\{lane="listener"\} [1-9]/]);
    assert.match(after, /chain_node_lane_restarts_total\{lane="listener"\} 1/, 'a crashed listener with open connections is restarted and the process survives');
  } finally {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The metrics text once every pattern matches it (or the last one read after a minute, for the assertions to report). */
async function metricsMatching(base: string, patterns: readonly RegExp[]): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const text = await (await fetch(`${base}/metrics`)).text();
    if (patterns.every((pattern) => pattern.test(text)) || Date.now() > deadline) return text;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
