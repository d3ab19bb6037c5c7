/**
 * Debian's nginx for tests (`.ci/run` installs it): where its binary is, and a process started in the foreground with
 * a configuration of the test's own, killed after the test.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path)) ?? (spawnSync('nginx', ['-v']).status === 0 ? 'nginx' : undefined);

export interface NginxProcess {
  /** Throws with nginx's output and error log when it has exited (call it while waiting for it to serve). */
  checkAlive(): void;
  /** What nginx wrote to stderr. */
  errors(): string;
}

/** Writes `config` to `dir/nginx.conf` and runs nginx with `dir` as its prefix. */
export function startNginx(t: TestContext, dir: string, config: string): NginxProcess {
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, config);
  const nginx = spawn(NGINX!, ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  nginx.stderr.on('data', (chunk: Buffer) => { errors += chunk.toString(); });
  // SIGTERM, not SIGKILL: a master process (the scale-out example runs with one) stops its workers, a killed one
  // would leave them running.
  const exited = new Promise<void>((resolve) => nginx.once('exit', () => resolve()));
  t.after(async () => {
    if (nginx.exitCode === null && nginx.signalCode === null) nginx.kill('SIGTERM');
    await exited;
  });
  return {
    checkAlive: () => {
      if (nginx.exitCode === null) return;
      const log = existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '';
      throw new Error(`nginx exited: ${errors}${log}`);
    },
    errors: () => errors,
  };
}
