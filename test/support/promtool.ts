/**
 * Runs Prometheus's `promtool` (Debian package `prometheus`; `.ci/run` installs it when missing).
 * `PROMTOOL` names another binary. A missing promtool fails the test that needs it, with how to get it.
 */
import { spawn } from 'node:child_process';

export const PROMTOOL = process.env.PROMTOOL ?? 'promtool';

export interface PromtoolResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function promtool(args: readonly string[], input?: string, cwd?: string): Promise<PromtoolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(PROMTOOL, args, { stdio: ['pipe', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    child.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT'
      ? new Error(`${PROMTOOL} not found: install Debian's prometheus package (apt-get install -y prometheus) or set PROMTOOL`)
      : error));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}
