/**
 * The one schema of the TOML configuration: it validates the file and produces the TypeScript
 * types every lane uses. Every key here is documented, with its default, in config.example.toml.
 */
import { z } from 'zod';

const HOST_PORT = /^(?<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(?<port>\d{1,5})$/;

/** `host:port` with a port in 0–65535 (0 picks a free port). */
const listenAddress = z.string().refine((value) => {
  const port = Number(HOST_PORT.exec(value)?.groups?.port ?? NaN);
  return port >= 0 && port <= 65535;
}, 'expected host:port with a port between 0 and 65535, e.g. 127.0.0.1:8080');

const positiveInt = z.number().int().positive();

/** The budget and supervision policy of one lane. */
const actorBudget = (defaults: { mailbox_capacity: number; memory_mb: number; instances?: number }) =>
  z.strictObject({
    /** Worker threads running this lane (listeners may run several on one port). */
    instances: positiveInt.max(64).default(defaults.instances ?? 1),
    mailbox_capacity: positiveInt.max(1_000_000).default(defaults.mailbox_capacity),
    memory_mb: z.number().int().min(16).max(65_536).default(defaults.memory_mb),
    restart_intensity: z.number().int().min(0).max(1000).default(5),
    restart_period_seconds: positiveInt.max(86_400).default(60),
    backoff_initial_ms: positiveInt.max(600_000).default(200),
    backoff_max_ms: positiveInt.max(3_600_000).default(30_000),
    backoff_jitter: z.number().min(0).max(1).default(0.2),
  }).prefault({});

export const configSchema = z.strictObject({
  data_dir: z.string().min(1).default('./data'),
  listeners: z.strictObject({
    api: listenAddress.default('127.0.0.1:8080'),
    rpc_http: listenAddress.default('127.0.0.1:8545'),
    rpc_ws: listenAddress.default('127.0.0.1:8546'),
  }).prefault({}),
  auth: z.strictObject({
    token_file: z.string().default(''),
  }).prefault({}),
  log: z.strictObject({
    level: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
    max_lines_per_second: positiveInt.max(100_000).default(200),
  }).prefault({}),
  runtime: z.strictObject({
    pool_threads: positiveInt.max(256).default(2),
    shutdown_timeout_seconds: positiveInt.max(600).default(10),
    message_batching: z.boolean().default(true),
  }).prefault({}),
  limits: z.strictObject({
    max_request_body_bytes: positiveInt.max(256 * 1024 * 1024).default(1024 * 1024),
    max_url_bytes: positiveInt.max(65_536).default(8192),
  }).prefault({}),
  actors: z.strictObject({
    listener: actorBudget({ mailbox_capacity: 1024, memory_mb: 256 }),
  }).prefault({}),
});

export type NodeConfig = z.infer<typeof configSchema>;
export type ActorBudget = NodeConfig['actors']['listener'];
export type LaneName = keyof NodeConfig['actors'];
