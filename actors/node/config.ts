/**
 * Loading the configuration: TOML file → `--set` overrides (each parsed by its key's type) →
 * schema validation. Any problem stops start-up with the key, the value and what was expected.
 * The API bearer token is read from the environment file named by `auth.token_file`, never from TOML.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { parse as parseToml } from 'smol-toml';
import type { z } from 'zod';
import { configSchema, type NodeConfig } from './config-schema.js';
import { describeNatsSecrets, readNatsSecrets, type NatsSecrets } from './jetstream-secrets.js';

export class ConfigError extends Error {
  constructor(readonly problems: ReadonlyArray<{ key: string; value: string; expected: string }>) {
    super(problems.map((p) => `config key '${p.key}' = ${p.value}: ${p.expected}`).join('\n'));
    this.name = 'ConfigError';
  }
}

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
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([{ key: '--config', value: JSON.stringify(file), expected: `a readable TOML file (${(error as Error).message})` }]);
  }
  let raw: Record<string, unknown>;
  try {
    raw = toPlain(parseToml(text, { integersAsBigInt: false })) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError([{ key: '(file)', value: JSON.stringify(file), expected: `valid TOML: ${(error as Error).message.split('\n')[0]}` }]);
  }
  for (const override of overrides) applyOverride(raw, override);
  const config = validate(raw);
  const base = dirname(resolve(file));
  const natsSecrets = readNatsSecrets(config.delivery.jetstream, base);
  if (Array.isArray(natsSecrets)) throw new ConfigError(natsSecrets);
  return { config, dataDir: resolve(base, config.data_dir), configDir: base, apiToken: readApiToken(config.auth.token_file, base), natsSecrets };
}

export function validate(raw: unknown): NodeConfig {
  const result = configSchema.safeParse(raw);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.flatMap((issue) => describeIssue(issue, raw)));
}

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): Array<{ key: string; value: string; expected: string }> {
  if (issue.code === 'unrecognized_keys') {
    const known = Object.keys(shapeAt(issue.path.map(String)) ?? {});
    return issue.keys.map((key) => ({
      key: [...issue.path, key].join('.'),
      value: show(valueAt(raw, [...issue.path, key])),
      expected: `unknown key; expected one of: ${known.join(', ')}`,
    }));
  }
  return [{ key: issue.path.join('.') || '(root)', value: show(valueAt(raw, issue.path)), expected: issue.message }];
}

/** `dotted.key=value`: the value is parsed by the type the schema gives that key. */
function applyOverride(raw: Record<string, unknown>, override: string): void {
  const eq = override.indexOf('=');
  if (eq <= 0) throw new ConfigError([{ key: '--set', value: JSON.stringify(override), expected: 'dotted.key=value' }]);
  const key = override.slice(0, eq);
  const text = override.slice(eq + 1);
  const path = key.split('.');
  const leaf = schemaAt(path);
  if (!leaf) throw new ConfigError([{ key, value: JSON.stringify(text), expected: 'a key that exists in the configuration schema' }]);
  const value = parseOverrideValue(key, text, leafType(leaf));
  let node = raw;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

function parseOverrideValue(key: string, text: string, type: string): unknown {
  const fail = (expected: string) => new ConfigError([{ key, value: JSON.stringify(text), expected }]);
  switch (type) {
    case 'string':
    case 'enum':
      return text;
    case 'number': {
      const value = Number(text);
      if (text.trim() === '' || !Number.isFinite(value)) throw fail('a number');
      return value;
    }
    case 'boolean':
      if (text === 'true' || text === 'false') return text === 'true';
      throw fail('true or false');
    default:
      try {
        return toPlain((parseToml(`value = ${text}`) as { value: unknown }).value);
      } catch {
        throw fail(`a TOML ${type} value`);
      }
  }
}

type SchemaNode = { def: { type: string; innerType?: SchemaNode; shape?: Record<string, SchemaNode> }; shape?: Record<string, SchemaNode> };

function unwrap(node: SchemaNode): SchemaNode {
  let current = node;
  while (current.def.innerType && ['default', 'prefault', 'optional', 'nullable', 'pipe', 'readonly'].includes(current.def.type)) current = current.def.innerType;
  return current;
}

function schemaAt(path: readonly string[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = configSchema as unknown as SchemaNode;
  for (const part of path) {
    const shape: Record<string, SchemaNode> | undefined = node ? unwrap(node).shape : undefined;
    node = shape && Object.hasOwn(shape, part) ? shape[part] : undefined;
    if (!node) return undefined;
  }
  return node;
}

function shapeAt(path: readonly string[]): Record<string, SchemaNode> | undefined {
  const node = schemaAt(path);
  return node ? unwrap(node).shape : undefined;
}

function leafType(node: SchemaNode): string {
  return unwrap(node).def.type;
}

function valueAt(raw: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let node = raw;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[part];
  }
  return node;
}

function show(value: unknown): string {
  if (value === undefined) return '(missing)';
  const text = typeof value === 'bigint' ? value.toString() : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

/** smol-toml returns prototype-less objects and TOML dates; give the schema plain values. */
function toPlain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toPlain);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toPlain(v)]));
  return value;
}

/** Reads `CHAIN_NODE_API_TOKEN` from the environment file; refuses a file that other users can read. */
function readApiToken(tokenFile: string, base: string): string | null {
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
