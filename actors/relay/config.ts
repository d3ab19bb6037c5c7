/**
 * `chain-node relay --config relay.toml`: the relay's configuration. Its sections are the node's where they mean
 * the same (`[listeners] api`, `[auth]`, `[log]`, `[limits]`, `[sse]`, `[delivery.jetstream]`: copy them from the
 * node's file), plus `[relay]`. Secrets come from files or the environment (auth.token_file, the NATS credentials),
 * never from the TOML, and are never logged.
 */
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { authSection, limitsSection, listenAddress, logSection, positiveInt, sseSection } from '../node/config-schema.js';
import { readApiToken } from '../node/config.js';
import { jetstreamConfig } from '../node/jetstream-config.js';
import { readNatsSecrets, type NatsSecrets } from '../node/jetstream-secrets.js';
import { ConfigError, readTomlConfig } from '../node/toml-config.js';

const bucketName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected a bucket name of 1-64 letters, digits, "_" or "-"');

export const relayConfigSchema = z.strictObject({
  listeners: z.strictObject({
    api: listenAddress.default('127.0.0.1:8090'),
  }).prefault({}),
  auth: authSection.prefault({}),
  log: logSection.prefault({}),
  limits: limitsSection.prefault({}),
  sse: sseSection.prefault({}),
  delivery: z.strictObject({
    jetstream: jetstreamConfig.prefault({}),
  }).prefault({}),
  relay: z.strictObject({
    /** The key-value bucket of the relay's durable consumers (created when missing, with `delivery.jetstream.replicas`). */
    consumer_bucket: bucketName.default('CHAIN_NODE_RELAY_CONSUMERS'),
    /** Bytes of decoded changes kept in memory across all processors; older ones are fetched from the stream again when read. */
    cache_bytes: positiveInt.max(Number.MAX_SAFE_INTEGER).default(1024 ** 3),
    /** How long a stop waits for open requests before it closes every connection. */
    shutdown_timeout_seconds: positiveInt.max(600).default(10),
  }).prefault({}),
}).superRefine((config, ctx) => {
  if (config.delivery.jetstream.servers.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['delivery', 'jetstream', 'servers'], message: 'expected at least one NATS server (e.g. ["nats://127.0.0.1:4222"]): a relay serves from JetStream' });
  }
});

export type RelayConfig = z.infer<typeof relayConfigSchema>;

export interface LoadedRelayConfig {
  readonly config: RelayConfig;
  readonly apiToken: string | null;
  readonly natsSecrets: NatsSecrets;
}

export function loadRelayConfig(file: string, overrides: readonly string[] = []): LoadedRelayConfig {
  const config = readTomlConfig(relayConfigSchema, file, overrides);
  const base = dirname(resolve(file));
  // A relay always connects: the credentials are read whatever `enabled` (a node's switch) says.
  const natsSecrets = readNatsSecrets({ ...config.delivery.jetstream, enabled: true }, base);
  if (Array.isArray(natsSecrets)) throw new ConfigError(natsSecrets);
  return { config, apiToken: readApiToken(config.auth.token_file, base), natsSecrets };
}
