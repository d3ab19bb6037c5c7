/**
 * The sink's PostgreSQL connection settings (issue 32 point 1): `postgres.url` (a libpq URL without a password) or
 * the standard PG* environment variables (PGHOST, PGPORT, PGUSER, PGDATABASE, PGSSLMODE… as `pg` reads them). The
 * password is asked for only when the server wants one: PGPASSWORD, else the libpq password file (PGPASSFILE or
 * ~/.pgpass; ignored, as libpq does, when others may read it). It is never logged: `describeTarget` names the user,
 * host, port and database only.
 */
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';

export interface PostgresSettings {
  readonly url: string;
  readonly application_name: string;
  readonly connect_timeout_ms: number;
}

/** Where the connection goes: from the URL, else the environment, else libpq's defaults. */
export function connectionTarget(settings: Pick<PostgresSettings, 'url'>, env: NodeJS.ProcessEnv = process.env): { host: string; port: number; database: string; user: string } {
  const url = settings.url === '' ? null : new URL(settings.url);
  const user = decodeURIComponent(url?.username ?? '') || env.PGUSER || env.USER || 'postgres';
  return {
    host: decodeURIComponent(url?.hostname ?? '') || url?.searchParams.get('host') || env.PGHOST || 'localhost',
    port: Number(url?.port || env.PGPORT || 5432),
    database: decodeURIComponent(url?.pathname.slice(1) ?? '') || env.PGDATABASE || user,
    user,
  };
}

export function describeTarget(settings: Pick<PostgresSettings, 'url'>, env: NodeJS.ProcessEnv = process.env): string {
  const target = connectionTarget(settings, env);
  return `${target.user}@${target.host}:${target.port}/${target.database}`;
}

/** Splits one password-file line into its five fields (`\:` and `\\` escaped). */
function passFields(line: string): string[] {
  const fields: string[] = [];
  let current = '';
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i]!;
    if (c === '\\' && i + 1 < line.length) current += line[++i];
    else if (c === ':') {
      fields.push(current);
      current = '';
    } else current += c;
  }
  fields.push(current);
  return fields;
}

/** The password for `target` in the libpq password file, or undefined (no file, no match, or readable by others). */
export function passFilePassword(target: { host: string; port: number; database: string; user: string }, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const file = env.PGPASSFILE || join(env.HOME || homedir(), '.pgpass');
  try {
    if ((statSync(file).mode & 0o077) !== 0) return undefined;
    const wanted = [target.host, String(target.port), target.database, target.user];
    for (const line of readFileSync(file, 'utf8').split(/\r?\n/)) {
      if (line === '' || line.startsWith('#')) continue;
      const fields = passFields(line);
      if (fields.length < 5) continue;
      if (wanted.every((value, i) => fields[i] === '*' || fields[i] === value || (i === 0 && fields[i] === 'localhost' && value.startsWith('/')))) return fields.slice(4).join(':');
    }
  } catch {
    // no password file
  }
  return undefined;
}

/** The `pg.Client` configuration; `password` is a function, called only when the server asks for one. */
export function clientConfig(settings: PostgresSettings, env: NodeJS.ProcessEnv = process.env): pg.ClientConfig {
  const target = connectionTarget(settings, env);
  return {
    ...(settings.url === '' ? {} : { connectionString: settings.url }),
    application_name: settings.application_name,
    connectionTimeoutMillis: settings.connect_timeout_ms,
    keepAlive: true,
    password: async () => env.PGPASSWORD ?? passFilePassword(target, env) ?? '',
  };
}
