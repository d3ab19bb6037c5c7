/**
 * The native SSE load client (bench/load/sse-clients.c): compiled on first use with the system C
 * compiler into `bench/cache/` (keyed by a hash of the source, so an edited source is rebuilt), and
 * started like the node scripts, with the open-file limit raised. Where no compiler is installed
 * (CI machines have what `npm ci` installs) or `BENCH_SSE_CLIENT=node` is set, `nativeSseClient`
 * answers null and the pool runs the node:http client (bench/load/sse-clients.ts) instead.
 * `BENCH_SSE_COALESCE_US` overrides the native client's pause after a loop turn that read something
 * (default 0: each stream is read as soon as epoll reports it). The client inflates gzip-coded streams
 * with ISA-L (`-lisal`, Debian's libisal-dev) where it is installed, else with zlib (`-lz`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { trackChild } from '../leftovers.js';

/** The source stays in the source tree (tsc does not copy it): dist/bench/load → bench/load. */
const SOURCE = fileURLToPath(new URL('../../../bench/load/sse-clients.c', import.meta.url));
const CACHE = fileURLToPath(new URL('../../../bench/cache/', import.meta.url));

let built: { path: string | null; why: string } | undefined;

/** The compiled client's path, or null (with the reason) when it cannot be had here. */
export function nativeSseClient(): { path: string | null; why: string } {
  if (built) return built;
  built = build();
  return built;
}

function build(): { path: string | null; why: string } {
  if (process.env.BENCH_SSE_CLIENT === 'node') return { path: null, why: 'BENCH_SSE_CLIENT=node' };
  if (!existsSync(SOURCE)) return { path: null, why: `${SOURCE} is missing` };
  const source = readFileSync(SOURCE);
  const binary = `${CACHE}sse-clients-${createHash('sha256').update(source).digest('hex').slice(0, 16)}`;
  if (existsSync(binary)) return { path: binary, why: 'cached build' };
  mkdirSync(CACHE, { recursive: true });
  const partial = `${binary}.${process.pid}.tmp`;
  for (const compiler of [process.env.CC, 'cc', 'gcc', 'clang'].filter((c): c is string => Boolean(c))) {
    // ISA-L's inflate first (Debian's libisal-dev; 2-3x zlib's speed, so decoding loads the shared machine less), then zlib.
    let failure = '';
    for (const inflater of [{ name: 'ISA-L', flags: ['-DHAVE_ISAL', '-lisal'] }, { name: 'zlib', flags: ['-lz'] }]) {
      const result = spawnSync(compiler, ['-O2', '-o', partial, SOURCE, ...inflater.flags], { encoding: 'utf8' });
      if (result.status === 0) {
        renameSync(partial, binary);
        return { path: binary, why: `built with ${compiler}, inflating with ${inflater.name}` };
      }
      rmSync(partial, { force: true });
      if (result.error !== undefined) break;
      failure = `${compiler} failed: ${result.stderr.slice(-500)}`;
    }
    if (failure !== '') return { path: null, why: failure };
  }
  return { path: null, why: 'no C compiler (cc, gcc, clang) on this machine' };
}

/** `binary args…` with the soft open-file limit raised to the hard one; stdin, stdout, stderr piped. */
export function spawnNative(binary: string, args: readonly string[]): ChildProcess {
  const raiseThenExec = 'ulimit -n "$(ulimit -Hn)" && exec "$@"';
  return trackChild(spawn('bash', ['-c', raiseThenExec, 'bash', binary, ...args], { stdio: ['pipe', 'pipe', 'pipe'] }));
}
