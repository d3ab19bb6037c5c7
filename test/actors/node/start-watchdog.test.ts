import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../actors/node/config.js';
import { startNode } from '../../../actors/node/main.js';
import { createLogger } from '../../../runtime/log.js';
import { freePort } from '../../support/ports.js';
import { child, lane } from '../../runtime/helpers.js';

// Only the test lane gets a short start budget: the node's own lanes keep the default
// runtime.start_timeout_seconds (600 s), so a loaded machine that starts them slowly cannot trip the
// watchdog first (with a node-wide 10 s budget it once stopped the node for its devnet source).
const STUCK_TIMEOUT_MS = 3000;

async function nodeWith(required: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-watchdog-'));
  const [api, rpcHttp, rpcWs] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(join(dir, 'node.toml'), `data_dir = "data"\n[listeners]\napi = "127.0.0.1:${api}"\nrpc_http = "127.0.0.1:${rpcHttp}"\nrpc_ws = "127.0.0.1:${rpcWs}"\n`);
  const lines: string[] = [];
  const log = createLogger({ lane: 'node', level: 'info', maxLinesPerSecond: 1000, destination: { write: (line: string) => { lines.push(line); return true; } } });
  const node = await startNode(loadConfig(join(dir, 'node.toml')), { log, extraLanes: [{ ...lane('stuck', [child('stuck', 'never-ready')]), required, startTimeoutMs: STUCK_TIMEOUT_MS }] });
  return { node, base: `http://127.0.0.1:${api}`, lines, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('a required lane that never reports ready stops the node after its start timeout, naming the worker', async () => {
  const { node, lines, cleanup } = await nodeWith(true);
  try {
    await node.stopped;
    assert.match(node.fatal() ?? '', /required lane 'stuck' did not get ready within its own start timeout of 3 s \(stuck\)/);
    assert.ok(lines.some((l) => l.includes('workers did not report ready') && l.includes('"stuck"')), lines.join('\n'));
  } finally {
    await node.stop();
    cleanup();
  }
});

test('an optional lane that never reports ready is named in /health/ready and the node keeps running', async () => {
  const { node, base, lines, cleanup } = await nodeWith(false);
  try {
    let body: { status: string; lanes: Array<{ lane: string; state: string; lastError: string | null; actors: Array<{ name: string; ready: boolean }> }> } | undefined;
    const deadline = Date.now() + 60_000;
    for (;;) {
      body = await fetch(`${base}/health/ready`).then((r) => r.json() as Promise<typeof body>, () => undefined);
      if (body?.lanes.find((l) => l.lane === 'stuck')?.lastError) break;
      if (Date.now() > deadline) throw new Error(`no watchdog report: ${JSON.stringify(body)}\n${lines.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const stuck = body!.lanes.find((l) => l.lane === 'stuck')!;
    assert.match(stuck.lastError!, /worker 'stuck' did not report ready within 3 s/);
    assert.deepEqual(stuck.actors.map((a) => [a.name, a.ready]), [['stuck', false]]);
    assert.equal(node.fatal(), null, 'the node keeps running');
  } finally {
    await node.stop();
    cleanup();
  }
});
