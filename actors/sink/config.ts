/**
 * `chain-node sink postgres --config sink.toml`: the sink's configuration (every key, with its default, in
 * examples/postgres-sink/sink.toml). `[log]` is the node's section; the rest is the sink's own. Secrets never come
 * from the TOML and are never logged: the API bearer from `node.token_file` (as the node's `auth.token_file`), the
 * consumer credential from `consumer.credentials_file` or the environment, the PostgreSQL password from PGPASSWORD
 * or the libpq password file (PGPASSFILE, ~/.pgpass) — a `postgres.url` that carries one is refused.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { listenAddress, logSection, positiveInt } from '../node/config-schema.js';
import { readApiToken } from '../node/config.js';
import { ConfigError, readTomlConfig } from '../node/toml-config.js';
import { DECLARED_TYPES, FIELD_PATH } from './mappings/declared.js';
import { COMMON_COLUMNS } from './tables.js';

export const CREDENTIAL_VARIABLE = 'CHAIN_NODE_SINK_CONSUMER_CREDENTIAL';

/** A PostgreSQL identifier the sink writes unquoted-safe: lower case, digits, `_`. */
const identifier = (max: number) => z.string().regex(new RegExp(`^[a-z_][a-z0-9_]{0,${max - 1}}$`), `expected a lower-case PostgreSQL identifier of 1-${max} letters, digits or "_" (not starting with a digit)`);

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

const httpUrl = z.string().refine(isHttpUrl, 'expected an http(s) URL without credentials, e.g. http://127.0.0.1:8080');

/** A libpq connection URL without a password (the password comes from PGPASSWORD or the password file). */
const postgresUrl = z.string().superRefine((value, ctx) => {
  if (value === '') return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'expected a libpq URL postgresql://user@host:port/database (or "" for the PG* environment variables)' });
    return;
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') ctx.addIssue({ code: 'custom', message: `expected a postgresql:// URL, got the scheme ${url.protocol}` });
  if (url.password !== '' || url.searchParams.has('password')) {
    ctx.addIssue({ code: 'custom', message: 'a password in the configuration is refused: set PGPASSWORD or use the libpq password file (PGPASSFILE, ~/.pgpass)' });
  }
});

const changeKind = z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$/, 'expected a change kind (e.g. "gas_stats.block.put")');
const fieldPath = z.string().regex(FIELD_PATH, 'expected a JSON field of the row, or a dotted path of fields (e.g. "lastChange.blockNumber")');

/** `[[processors.mapping]]`: how a collection of a kind without a built-in mapping lands (mappings/declared.ts). */
const declaredCollection = z.strictObject({
  collection: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, 'expected a collection name'),
  /** The change kind whose data is the row (an apply, or an undo restoring it). */
  put: changeKind,
  /** The change kind that removes the row. */
  delete: changeKind.optional(),
  /** Fields of the row JSON holding its block number, block hash and finality (finality kept equal when it becomes final). */
  block_number: fieldPath.optional(),
  block_hash: fieldPath.optional(),
  finality: fieldPath.optional(),
  /** Typed columns PostgreSQL computes from the row (STORED generated columns). */
  columns: z.array(z.strictObject({
    name: identifier(40).refine((name) => !(COMMON_COLUMNS as readonly string[]).includes(name), `expected a name other than the common columns (${COMMON_COLUMNS.join(', ')})`),
    type: z.enum(DECLARED_TYPES),
    field: fieldPath,
  })).default([]),
  /** Typed columns to index. */
  indexes: z.array(identifier(40)).default([]),
}).superRefine((entry, ctx) => {
  const names = new Set<string>();
  entry.columns.forEach((column, index) => {
    if (names.has(column.name)) ctx.addIssue({ code: 'custom', path: ['columns', index, 'name'], message: `expected unique column names; '${column.name}' is declared twice` });
    names.add(column.name);
  });
  entry.indexes.forEach((name, index) => {
    if (!names.has(name)) ctx.addIssue({ code: 'custom', path: ['indexes', index], message: `expected one of the declared columns (${[...names].join(', ') || 'none declared'})` });
  });
  if (entry.delete === entry.put) ctx.addIssue({ code: 'custom', path: ['delete'], message: 'expected a change kind other than put' });
});

const processorEntry = z.strictObject({
  /** The processor id at the node (its name in URLs). */
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._~-]{0,63}$/, 'expected a processor id (URL-safe, 1-64 characters)'),
  /** For a kind the sink has no mapping for (a user's kind): its collections and how its changes land. */
  mapping: z.array(declaredCollection).default([]).superRefine((list, ctx) => {
    const collections = new Set<string>();
    const kinds = new Set<string>();
    list.forEach((entry, index) => {
      if (collections.has(entry.collection)) ctx.addIssue({ code: 'custom', path: [index, 'collection'], message: `expected each collection once; '${entry.collection}' is mapped twice` });
      collections.add(entry.collection);
      for (const [key, kind] of [['put', entry.put], ['delete', entry.delete]] as const) {
        if (kind === undefined) continue;
        if (kinds.has(kind)) ctx.addIssue({ code: 'custom', path: [index, key], message: `expected each change kind in one place; '${kind}' is mapped twice` });
        kinds.add(kind);
      }
    });
  }),
  /** Collections to land (empty: every collection the kind's mapping knows). */
  collections: z.array(z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, 'expected a collection name')).default([]),
  /** Table name prefix (default: the id in lower case with other characters as "_", then "_"). */
  table_prefix: identifier(40).optional(),
});

export const sinkConfigSchema = z.strictObject({
  log: logSection.prefault({}),
  node: z.strictObject({
    /** The node's aggregate API: processors, schemas and query-and-follow snapshots. */
    url: httpUrl.default('http://127.0.0.1:8080'),
    /** Where the durable consumer is followed: a relay (`chain-node relay`) or, when empty, `url`. */
    follow_url: z.string().refine((value) => value === '' || isHttpUrl(value), 'expected "" (follow at node.url) or an http(s) URL without credentials, e.g. http://127.0.0.1:8090').default(''),
    /** Environment file with CHAIN_NODE_API_TOKEN=<bearer> when the node (and relay) require one; empty: none. */
    token_file: z.string().default(''),
    request_timeout_ms: positiveInt.max(600_000).default(30_000),
  }).prefault({}),
  consumer: z.strictObject({
    /** The durable consumer's id at each followed processor. */
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._~-]{0,63}$/, 'expected a consumer id (URL-safe, 1-64 characters)').default('postgres-sink'),
    /** Environment file with CHAIN_NODE_SINK_CONSUMER_CREDENTIAL=<secret of 16+ characters>; empty: that variable of the environment. */
    credentials_file: z.string().default(''),
    /** required: the node keeps changes the sink has not acknowledged while its lease is active; best_effort: it does not. */
    role: z.enum(['required', 'best_effort']).default('required'),
    lease_ttl_seconds: positiveInt.max(7 * 86_400).default(300),
    /** Changes asked for per batch; each batch is one PostgreSQL transaction (at most the node's limits.max_page_limit). */
    batch_changes: positiveInt.max(100_000).default(1000),
    /** While caught up, how often the change head is read to see a new change. */
    idle_poll_ms: positiveInt.max(60_000).default(100),
  }).prefault({}),
  postgres: z.strictObject({
    /** libpq URL without a password, e.g. postgresql://sink@127.0.0.1:5432/chain; empty: PGHOST, PGPORT, PGUSER, PGDATABASE. */
    url: postgresUrl.default(''),
    /** Schema holding the sink's tables (created when missing). */
    schema: identifier(63).default('chain_node'),
    application_name: z.string().max(63).default('chain-node-sink'),
    connect_timeout_ms: positiveInt.max(600_000).default(10_000),
  }).prefault({}),
  sink: z.strictObject({
    /** On reset_required: rebootstrap (snapshot into fresh tables, swapped in one transaction) or stop (exit 1, tables untouched). */
    on_reset: z.enum(['rebootstrap', 'stop']).default('rebootstrap'),
    /** Rows asked for per snapshot page while bootstrapping (at most the node's limits.max_page_limit). */
    bootstrap_page_rows: positiveInt.max(100_000).default(1000),
    /**
     * Most changes in one transaction: a sink that is behind applies the batches it already fetched together (one
     * commit, each row written once); caught up, every batch is its own transaction.
     */
    max_transaction_changes: positiveInt.max(1_000_000).default(10_000),
    /** How long a start waits for another session's lock on a processor's tables (a killed sink's) before it refuses. */
    lock_wait_seconds: positiveInt.max(3600).default(30),
    /** How long a stop waits for the open transactions. */
    shutdown_timeout_seconds: positiveInt.max(600).default(30),
    /** Bootstrap progress lines: every this many milliseconds. */
    progress_interval_ms: positiveInt.max(600_000).default(1000),
  }).prefault({}),
  metrics: z.strictObject({
    /** host:port of the sink's /metrics (Prometheus text) and /health; "" turns it off. Loopback unless you say otherwise. */
    listen: z.string().refine((value) => value === '' || listenAddress.safeParse(value).success, 'expected "" (off) or host:port with a port between 0 and 65535, e.g. 127.0.0.1:9464').default('127.0.0.1:9464'),
  }).prefault({}),
  processors: z.array(processorEntry).min(1, 'expected at least one [[processors]] entry naming a processor to land').superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((entry, index) => {
      if (seen.has(entry.id)) ctx.addIssue({ code: 'custom', path: [index, 'id'], message: `expected unique processor ids; '${entry.id}' is listed twice` });
      seen.add(entry.id);
    });
  }),
});

export type SinkConfig = z.infer<typeof sinkConfigSchema>;
export type SinkProcessorEntry = z.infer<typeof processorEntry>;

export interface LoadedSinkConfig {
  readonly config: SinkConfig;
  readonly apiToken: string | null;
  /** The consumer credential (never logged). */
  readonly credential: string;
}

/** Reads the consumer credential from the environment file, or from the environment when no file is named. */
export function readConsumerCredential(file: string, base: string, env: NodeJS.ProcessEnv = process.env): string {
  const problem = (value: string, expected: string) => new ConfigError([{ key: 'consumer.credentials_file', value, expected }]);
  let value: string | undefined;
  if (file === '') {
    value = env[CREDENTIAL_VARIABLE];
    if (!value) throw problem('""', `a file with a line ${CREDENTIAL_VARIABLE}=<secret>, or ${CREDENTIAL_VARIABLE} set in the environment`);
  } else {
    const path = resolve(base, file);
    let mode: number;
    try {
      mode = statSync(path).mode;
    } catch {
      throw problem(JSON.stringify(file), `an existing environment file with a line ${CREDENTIAL_VARIABLE}=<secret>`);
    }
    if ((mode & 0o077) !== 0) throw problem(JSON.stringify(file), `a file readable only by its owner (mode is ${(mode & 0o777).toString(8)}; run chmod 600)`);
    value = parseEnv(readFileSync(path, 'utf8'))[CREDENTIAL_VARIABLE];
    if (!value) throw problem(JSON.stringify(file), `a line ${CREDENTIAL_VARIABLE}=<secret> in the file`);
  }
  if (value.length < 16) throw problem(JSON.stringify(file), `a consumer credential of at least 16 characters in ${CREDENTIAL_VARIABLE}`);
  return value;
}

/** A URL's password (and a `password` query parameter) replaced, for a problem that echoes the value. */
function maskPassword(value: string): string {
  return value.replace(/(\/\/[^/:@]*:)[^@/]*@/, '$1********@').replace(/([?&]password=)[^&"]*/, '$1********');
}

export function loadSinkConfig(file: string, overrides: readonly string[] = []): LoadedSinkConfig {
  let config: SinkConfig;
  try {
    config = readTomlConfig(sinkConfigSchema, file, overrides);
  } catch (error) {
    // A refused postgres.url may carry the password it is refused for: the problem never echoes it.
    if (error instanceof ConfigError) throw new ConfigError(error.problems.map((p) => (p.key === 'postgres.url' ? { ...p, value: maskPassword(p.value) } : p)));
    throw error;
  }
  const base = dirname(resolve(file));
  let apiToken: string | null;
  try {
    apiToken = readApiToken(config.node.token_file, base);
  } catch (error) {
    // The node's reader names its own key; the sink's is node.token_file.
    if (error instanceof ConfigError) throw new ConfigError(error.problems.map((p) => ({ ...p, key: 'node.token_file' })));
    throw error;
  }
  return { config, apiToken, credential: readConsumerCredential(config.consumer.credentials_file, base) };
}

/** The effective configuration for display: secrets masked. */
export function describeSinkConfig(loaded: LoadedSinkConfig): Record<string, unknown> {
  return { ...loaded.config, node: { ...loaded.config.node, token: loaded.apiToken === null ? null : '********' }, consumer: { ...loaded.config.consumer, credential: '********' } };
}
