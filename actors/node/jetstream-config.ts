/**
 * `[delivery.jetstream]`: the schema of the publication of every processor's change feed to a NATS
 * JetStream stream (issue 30; actors/publisher). Off by default. Secrets never live here: the
 * credentials come from an environment file or a NATS `.creds` file (see jetstream-secrets.ts).
 */
import { z } from 'zod';

/** `nats://host:port`, `tls://host:port` or `host:port`. */
const natsServer = z.string().regex(/^((nats|tls):\/\/)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'expected a NATS server as nats://host:port, tls://host:port or host:port');

export const jetstreamConfig = z.strictObject({
  /** Publish every change of every instance with delivery on; false: no publisher lane. */
  enabled: z.boolean().default(false),
  /** Seed servers of the NATS cluster; the client learns the others from them. */
  servers: z.array(natsServer).max(64).default([]),
  /** The JetStream stream (created when missing, with the limits below; an existing one is used as it is). */
  stream: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected a stream name of 1-64 letters, digits, "_" or "-"').default('CHAIN_NODE_CHANGES'),
  /** Subjects are `<subject_prefix>.<instance id>`; one subject per processor instance (and backfill-subscription stream). */
  subject_prefix: z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'expected dot-separated tokens of letters, digits, "_" or "-", e.g. chain-node.changes').default('chain-node.changes'),
  /** The key-value bucket of processor descriptors and coverage that relays answer `hello` and coverage from (docs/jetstream.md "Descriptors"). */
  descriptor_bucket: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected a bucket name of 1-64 letters, digits, "_" or "-"').default('CHAIN_NODE_DESCRIPTORS'),
  /** Stream replicas: 1 (one server) or 3 (a three-server cluster; RAFT-replicated). */
  replicas: z.union([z.literal(1), z.literal(3)], { error: 'expected 1 or 3' }).default(1),
  /** Bytes the stream may hold in all (0: no byte limit); per-subject message limits follow each instance's retain_changes. */
  max_bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  /** Largest message the publisher sends (a change group over it is split); also bounded by the server's max_payload. */
  max_message_bytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
  /** How long a publish waits for the stream's acknowledgement before it counts as a `timeout` error and is retried. */
  ack_timeout_ms: z.number().int().positive().max(600_000).default(5000),
  /** Pause after a publish error before the publisher reads the stream's last message and tries again (doubles up to 30 s). */
  retry_initial_ms: z.number().int().positive().max(600_000).default(500),
  /** Environment file (mode 0600) with CHAIN_NODE_NATS_TOKEN=<token>, or CHAIN_NODE_NATS_USER= and CHAIN_NODE_NATS_PASSWORD=; empty: the same variables from the process environment, else no credentials. */
  credentials_file: z.string().default(''),
  /** A NATS `.creds` file (JWT and NKey seed; mode 0600); exclusive with token or user/password. */
  creds_file: z.string().default(''),
  /** PEM CA bundle to verify the servers' certificates (TLS on when set or when a server URL is tls://). */
  tls_ca_file: z.string().default(''),
  /** PEM client certificate and key for mutual TLS (both or neither). */
  tls_cert_file: z.string().default(''),
  tls_key_file: z.string().default(''),
}).superRefine((js, ctx) => {
  if (js.enabled && js.servers.length === 0) ctx.addIssue({ code: 'custom', path: ['servers'], message: 'expected at least one NATS server (e.g. ["nats://127.0.0.1:4222"]) when delivery.jetstream.enabled = true' });
  if ((js.tls_cert_file === '') !== (js.tls_key_file === '')) {
    ctx.addIssue({ code: 'custom', path: [js.tls_cert_file === '' ? 'tls_cert_file' : 'tls_key_file'], message: 'expected both tls_cert_file and tls_key_file (mutual TLS), or neither' });
  }
});

export type JetstreamConfig = z.infer<typeof jetstreamConfig>;
