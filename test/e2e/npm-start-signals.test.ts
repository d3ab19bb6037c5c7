import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../support/paths.js';
import { freePort } from '../support/ports.js';
import { removeDir, runCli } from '../support/node-process.js';

test('SIGTERM to the `npm start` process stops the node with exit 0 and releases the data-directory lock', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-npm-start-'));
  const dataDir = join(dir, 'data');
  const [api, rpcHttp, rpcWs] = [await freePort(), await freePort(), await freePort()];
  const npm = spawn('npm', ['start', '--',
    '--set', `data_dir=${dataDir}`, '--set', `listeners.api=127.0.0.1:${api}`,
    '--set', `listeners.rpc_http=127.0.0.1:${rpcHttp}`, '--set', `listeners.rpc_ws=127.0.0.1:${rpcWs}`,
  ], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  npm.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | string | null>((resolve) => npm.once('exit', (code, signal) => resolve(code ?? signal)));
  try {
    for (;;) {
      if (npm.exitCode !== null) throw new Error(`npm start exited early:\n${output.join('')}`);
      const ready = await fetch(`http://127.0.0.1:${api}/health/ready`).then((r) => r.status === 200, () => false);
      if (ready) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(existsSync(join(dataDir, 'LOCK')), 'the running node holds the lock');
    npm.kill('SIGTERM');
    assert.equal(await exited, 0, `npm start exits 0 after SIGTERM:\n${output.join('')}`);
    assert.match(output.join(''), /"message":"stopped"/, 'the node itself stopped gracefully');
    assert.ok(!existsSync(join(dataDir, 'LOCK')), 'the lock file is gone');
    const inspect = await runCli(['db', 'inspect', '--data-dir', dataDir]);
    assert.equal(inspect.code, 0, `the data directory can be locked again: ${inspect.stderr}`);
    await assert.rejects(fetch(`http://127.0.0.1:${api}/health/live`), 'nothing listens any more');
  } finally {
    if (npm.exitCode === null) npm.kill('SIGKILL');
    removeDir(dir);
  }
});
