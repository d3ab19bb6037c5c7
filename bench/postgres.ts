/**
 * A throwaway PostgreSQL cluster for tests and the sink bench: Debian's `postgresql` server binaries (`.ci/run` installs them; `PG_BIN`
 * names another bin folder) — `initdb` into a temporary directory, then `postgres` on a free loopback port with its
 * socket in that directory. initdb refuses to run as root, so under root both run as `nobody`. Ready once a client
 * connects; `stop` ends it (SIGINT: fast shutdown), `close` also removes its directory. Every server started here is
 * also killed when the test process exits, so a failing test never leaves one behind.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { freePort } from './node.js';

/** The folder of initdb and postgres. */
export function postgresBinDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  for (const version of ['17', '16', '15', '14', '13']) {
    const dir = `/usr/lib/postgresql/${version}/bin`;
    if (existsSync(join(dir, 'postgres'))) return dir;
  }
  try {
    return dirname(realpathSync(execFileSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).trim()));
  } catch {
    throw new Error('PostgreSQL server binaries not found: install Debian\'s postgresql package (apt-get install -y postgresql) or set PG_BIN');
  }
}

export interface PostgresServer {
  readonly port: number;
  readonly dir: string;
  /** `postgresql://postgres@127.0.0.1:<port>/postgres` (trust authentication, no password). */
  readonly url: string;
  /** A connected client (the caller ends it). */
  client(): Promise<pg.Client>;
  /** Runs one statement on a fresh connection and returns its rows. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  stop(): Promise<void>;
  close(): Promise<void>;
  log(): string;
}

const live = new Set<ChildProcess>();
let cleanupInstalled = false;

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/**
 * Where the cluster's directory goes: the temporary directory, unless the server runs as another user (nobody, under
 * root) who cannot reach it (a parent without search permission for others, e.g. a test's private TMPDIR): then /tmp.
 */
function clusterParent(asOtherUser: boolean): string {
  const base = tmpdir();
  if (!asOtherUser) return base;
  for (let dir = realpathSync(base); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return '/tmp';
    if (dirname(dir) === dir) return base;
  }
}

/** As root: run the server as nobody (initdb refuses root). */
function identity(): { uid?: number; gid?: number } {
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
}

export interface StartPostgresOptions {
  /** Extra `-c name=value` settings. Tests default to fsync off (the server itself is never killed). */
  readonly settings?: Readonly<Record<string, string>>;
}

export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  installCleanup();
  const bin = postgresBinDir();
  const id = identity();
  const dir = mkdtempSync(join(clusterParent(id.uid !== undefined), 'cdn-pg-'));
  const data = join(dir, 'data');
  if (id.uid !== undefined) chownSync(dir, id.uid, id.gid!);
  chmodSync(dir, 0o700);
  await run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], id);
  const port = await freePort();
  const settings = { fsync: 'off', full_page_writes: 'off', synchronous_commit: 'off', max_connections: '50', ...options.settings };
  const args = ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  let stderr = '';
  const child = spawn(join(bin, 'postgres'), args, { ...id, stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => { live.delete(child); resolve(); }));
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const connect = async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}:\n${stderr}`);
    try {
      await (await connect()).end();
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`postgres not ready within 30 s:\n${stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    await exited;
  };
  return {
    port, dir, url,
    client: connect,
    async query(text, values) {
      const client = await connect();
      try {
        return (await client.query(text, values)).rows;
      } finally {
        await client.end();
      }
    },
    stop,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => stderr,
  };
}

function run(file: string, args: readonly string[], id: { uid?: number; gid?: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn(file, args, { ...id, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT' ? new Error(`${file} not found: install Debian's postgresql package or set PG_BIN`) : error));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${file} exited with ${code}:\n${output}`))));
  });
}
