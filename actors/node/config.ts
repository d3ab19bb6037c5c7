/**
 * Loading the configuration: TOML file → `--set` overrides (each parsed by its key's type) →
 * schema validation. Any problem stops start-up with the key, the value and what was expected.
 * The API bearer token is read from the environment file named by `auth.token_file`, never from TOML.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError, readTomlConfig, validateWith } from './toml-config.js';
import { configSchema, type NodeConfig } from './config-schema.js';
import { describeNatsSecrets, readNatsSecrets, type NatsSecrets } from './jetstream-secrets.js';
import { resolveEraSources } from './era-sources.js';

export { ConfigError } from './toml-config.js';

export interface LoadedConfig {
  readonly config: NodeConfig;
  /** Absolute data directory (relative paths resolve against the config file's folder). */
  readonly dataDir: string;
  /** The config file's folder: other relative paths in the config resolve against it. */
  readonly configDir: string;
  /** The API bearer token, or null when `auth.token_file` is empty. */
  readonly apiToken: string | null;
  /** `[delivery.jetstream]` credentials and TLS material (empty when off). Never logged. */
  readonly natsSecrets: NatsSecrets;
}

export const TOKEN_VARIABLE = 'CHAIN_NODE_API_TOKEN';

export function loadConfig(file: string, overrides: readonly string[] = []): LoadedConfig {
  const base = dirname(resolve(file));
  const read = readTomlConfig(configSchema, file, overrides);
  const dataDir = resolve(base, read.data_dir);
  const config = resolveEraSources(read, base, dataDir);
  const natsSecrets = readNatsSecrets(config.delivery.jetstream, base);
  if (Array.isArray(natsSecrets)) throw new ConfigError(natsSecrets);
  return { config, dataDir, configDir: base, apiToken: readApiToken(config.auth.token_file, base), natsSecrets };
}

export function validate(raw: unknown): NodeConfig {
  return validateWith(configSchema, raw);
}

/** Reads `CHAIN_NODE_API_TOKEN` from the environment file; refuses a file that other users can read. */
export function readApiToken(tokenFile: string, base: string): string | null {
  if (tokenFile === '') return null;
  const path = resolve(base, tokenFile);
  const problem = (expected: string) => new ConfigError([{ key: 'auth.token_file', value: JSON.stringify(tokenFile), expected }]);
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    throw problem('an existing environment file with a line CHAIN_NODE_API_TOKEN=<token>');
  }
  if ((mode & 0o077) !== 0) throw problem(`a file readable only by its owner (mode is ${(mode & 0o777).toString(8)}; run chmod 600)`);
  const token = parseEnv(readFileSync(path, 'utf8'))[TOKEN_VARIABLE];
  if (!token) throw problem(`a line ${TOKEN_VARIABLE}=<token> in the file`);
  if (token.length < 16) throw problem(`a token of at least 16 characters in ${TOKEN_VARIABLE}`);
  return token;
}

/** The effective configuration for display: secrets masked. */
export function describeConfig(loaded: LoadedConfig): Record<string, unknown> {
  return {
    ...loaded.config,
    data_dir: loaded.dataDir,
    auth: { ...loaded.config.auth, token: loaded.apiToken === null ? null : '********' },
    delivery: { ...loaded.config.delivery, jetstream: { ...loaded.config.delivery.jetstream, credentials: describeNatsSecrets(loaded.natsSecrets ?? {}) } },
  };
}
