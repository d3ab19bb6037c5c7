import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';

const HOLD_LOCK_SCRIPT = fileURLToPath(new URL('./hold-lock.js', import.meta.url));

/** Starts a child process that holds the data-directory lock; resolves once it holds it. Killed when the test ends. */
export async function childHoldingLock(t: TestContext, dataDir: string, holder = 'node'): Promise<ChildProcess> {
  const child = spawn(process.execPath, [HOLD_LOCK_SCRIPT, dataDir, holder], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8')));
    child.once('exit', (code) => reject(new Error(`lock-holding child exited early with code ${code}`)));
  });
  const reported = JSON.parse(line) as { pid: number };
  if (reported.pid !== child.pid) throw new Error('lock holder reported an unexpected pid');
  return child;
}

/** SIGKILLs the child and waits until it has been reaped. */
export async function killHard(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}
