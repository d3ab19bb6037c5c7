/**
 * The NATS credentials of `[delivery.jetstream]`: read from the environment file named by
 * `credentials_file` (or the process environment), and the `.creds`/TLS files checked to exist.
 * Never from TOML, never logged: describeConfig shows only which kind of credential is in use.
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import type { JetstreamConfig } from './jetstream-config.js';

export const NATS_TOKEN_VARIABLE = 'CHAIN_NODE_NATS_TOKEN';
export const NATS_USER_VARIABLE = 'CHAIN_NODE_NATS_USER';
export const NATS_PASSWORD_VARIABLE = 'CHAIN_NODE_NATS_PASSWORD';

export interface NatsSecrets {
  readonly token?: string;
  readonly user?: string;
  readonly pass?: string;
  /** Contents of the `.creds` file. */
  readonly creds?: string;
  readonly tls?: { readonly ca?: string; readonly cert?: string; readonly key?: string };
}

export type SecretProblem = { key: string; value: string; expected: string };

/** The credentials and TLS material, or the problems found (key, value, expected). */
export function readNatsSecrets(js: JetstreamConfig, base: string, env: NodeJS.ProcessEnv = process.env): NatsSecrets | SecretProblem[] {
  if (!js.enabled) return {};
  const problems: SecretProblem[] = [];
  const key = (name: string) => `delivery.jetstream.${name}`;
  const ownerOnly = (name: string, file: string): string | null => {
    const path = resolve(base, file);
    try {
      const mode = statSync(path).mode;
      if ((mode & 0o077) !== 0) {
        problems.push({ key: key(name), value: JSON.stringify(file), expected: `a file readable only by its owner (mode is ${(mode & 0o777).toString(8)}; run chmod 600)` });
        return null;
      }
      return readFileSync(path, 'utf8');
    } catch {
      problems.push({ key: key(name), value: JSON.stringify(file), expected: 'an existing readable file' });
      return null;
    }
  };
  const readable = (name: string, file: string): string | undefined => {
    if (file === '') return undefined;
    try {
      return readFileSync(resolve(base, file), 'utf8');
    } catch {
      problems.push({ key: key(name), value: JSON.stringify(file), expected: 'an existing readable PEM file' });
      return undefined;
    }
  };
  let vars: Record<string, string | undefined> = env;
  if (js.credentials_file !== '') {
    const text = ownerOnly('credentials_file', js.credentials_file);
    vars = text === null ? {} : parseEnv(text);
    if (text !== null && !vars[NATS_TOKEN_VARIABLE] && !vars[NATS_USER_VARIABLE]) {
      problems.push({ key: key('credentials_file'), value: JSON.stringify(js.credentials_file), expected: `a line ${NATS_TOKEN_VARIABLE}=<token>, or lines ${NATS_USER_VARIABLE}=<user> and ${NATS_PASSWORD_VARIABLE}=<password>` });
    }
  }
  const token = vars[NATS_TOKEN_VARIABLE] || undefined;
  const user = vars[NATS_USER_VARIABLE] || undefined;
  const pass = vars[NATS_PASSWORD_VARIABLE] || undefined;
  const where = js.credentials_file === '' ? 'the environment' : 'credentials_file';
  if (token && user) problems.push({ key: key('credentials_file'), value: where, expected: `either ${NATS_TOKEN_VARIABLE} or ${NATS_USER_VARIABLE}/${NATS_PASSWORD_VARIABLE}, not both` });
  if (user && !pass) problems.push({ key: key('credentials_file'), value: where, expected: `${NATS_PASSWORD_VARIABLE} with ${NATS_USER_VARIABLE}` });
  const creds = js.creds_file === '' ? undefined : ownerOnly('creds_file', js.creds_file) ?? undefined;
  if (creds !== undefined && (token || user)) problems.push({ key: key('creds_file'), value: JSON.stringify(js.creds_file), expected: 'a .creds file or a token/user-password, not both' });
  if (creds !== undefined && !/-----BEGIN NATS USER JWT-----/.test(creds)) problems.push({ key: key('creds_file'), value: JSON.stringify(js.creds_file), expected: 'a NATS .creds file (a USER JWT and an NKEY seed block)' });
  const ca = readable('tls_ca_file', js.tls_ca_file);
  const cert = readable('tls_cert_file', js.tls_cert_file);
  const tlsKey = js.tls_key_file === '' ? undefined : ownerOnly('tls_key_file', js.tls_key_file) ?? undefined;
  if (problems.length > 0) return problems;
  const tls = ca || cert || tlsKey ? { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(tlsKey ? { key: tlsKey } : {}) } : undefined;
  return { ...(token ? { token } : {}), ...(user ? { user, pass } : {}), ...(creds ? { creds } : {}), ...(tls ? { tls } : {}) };
}

/** What describeConfig shows: the kind of credential, never its value. */
export function describeNatsSecrets(secrets: NatsSecrets): string {
  if (secrets.creds) return 'creds_file';
  if (secrets.token) return 'token';
  if (secrets.user) return 'user_password';
  return 'none';
}
