/**
 * README's Quick start, stopped the ways users stop it: SIGTERM to the `npm start` process (a container runtime or
 * process manager), and Ctrl-C, which sends SIGINT to the terminal's whole foreground process group — npm and the
 * node — after which npm forwards its copy to the node again (runtime/stop-signals.ts takes the two as one request).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../support/paths.js';
import { freePort } from '../support/ports.js';
import { removeDir, runCli } from '../support/node-process.js';

interface NpmStart {
  readonly npm: ChildProcess;
  readonly dataDir: string;
  readonly api: number;
  readonly output: string[];
  readonly exited: Promise<number | string | null>;
}

/** `npm start` on free ports and a temporary data dir, ready; `group`: in its own process group, as a terminal's job. */
async function npmStart(dir: string, group: boolean): Promise<NpmStart> {
  const dataDir = join(dir, 'data');
  const [api, rpcHttp, rpcWs] = [await freePort(), await freePort(), await freePort()];
  const npm = spawn('npm', ['start', '--',
    '--set', `data_dir=${dataDir}`, '--set', `listeners.api=127.0.0.1:${api}`,
    '--set', `listeners.rpc_http=127.0.0.1:${rpcHttp}`, '--set', `listeners.rpc_ws=127.0.0.1:${rpcWs}`,
  ], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: group });
  const output: string[] = [];
  npm.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  npm.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<number | string | null>((resolve) => npm.once('exit', (code, signal) => resolve(code ?? signal)));
  for (;;) {
    if (npm.exitCode !== null) throw new Error(`npm start exited early:\n${output.join('')}`);
    const ready = await fetch(`http://127.0.0.1:${api}/health/ready`).then((r) => r.status === 200, () => false);
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { npm, dataDir, api, output, exited };
}

test('SIGTERM to the `npm start` process stops the node with exit 0 and releases the data-directory lock', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-npm-start-'));
  let started: NpmStart | null = null;
  try {
    started = await npmStart(dir, false);
    const { npm, dataDir, api, output, exited } = started;
    assert.ok(existsSync(join(dataDir, 'LOCK')), 'the running node holds the lock');
    npm.kill('SIGTERM');
    assert.equal(await exited, 0, `npm start exits 0 after SIGTERM:\n${output.join('')}`);
    assert.match(output.join(''), /"message":"stopped"/, 'the node itself stopped gracefully');
    assert.ok(!existsSync(join(dataDir, 'LOCK')), 'the lock file is gone');
    const inspect = await runCli(['db', 'inspect', '--data-dir', dataDir]);
    assert.equal(inspect.code, 0, `the data directory can be locked again: ${inspect.stderr}`);
    await assert.rejects(fetch(`http://127.0.0.1:${api}/health/live`), 'nothing listens any more');
  } finally {
    if (started && started.npm.exitCode === null) started.npm.kill('SIGKILL');
    removeDir(dir);
  }
});

test('Ctrl-C on `npm start` (SIGINT to npm and the node, then npm forwarding its copy) stops the node gracefully', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-npm-start-'));
  let started: NpmStart | null = null;
  try {
    started = await npmStart(dir, true);
    const { npm, output, exited } = started;
    process.kill(-npm.pid!, 'SIGINT');
    assert.equal(await exited, 0, `npm start exits 0 after Ctrl-C:\n${output.join('')}`);
    const messages = output.join('').split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { message: string });
    assert.ok(messages.some((m) => m.message === 'stopped'), 'the node stopped gracefully');
    assert.ok(!messages.some((m) => m.message.startsWith('second signal')), 'the forwarded copy is not read as a second stop request');
  } finally {
    if (started && started.npm.exitCode === null) process.kill(-started.npm.pid!, 'SIGKILL');
    removeDir(dir);
  }
});
