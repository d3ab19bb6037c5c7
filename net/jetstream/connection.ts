/**
 * Connection options of every NATS client of ours (the node's publisher, a relay): seed servers, reconnection
 * without end, and the credentials and TLS material read by the configuration (never logged).
 */
import { credsAuthenticator, type ConnectionOptions } from '@nats-io/transport-node';

export interface NatsAuth {
  readonly token?: string;
  readonly user?: string;
  readonly pass?: string;
  /** Contents of a NATS `.creds` file. */
  readonly creds?: string;
  readonly tls?: { readonly ca?: string; readonly cert?: string; readonly key?: string };
}

export function natsConnectionOptions(servers: readonly string[], name: string, auth: NatsAuth = {}): ConnectionOptions {
  return {
    servers: [...servers], name, maxReconnectAttempts: -1,
    ...(auth.token ? { token: auth.token } : {}),
    ...(auth.user ? { user: auth.user, pass: auth.pass } : {}),
    ...(auth.creds ? { authenticator: credsAuthenticator(new TextEncoder().encode(auth.creds)) } : {}),
    ...(auth.tls ? { tls: { ...(auth.tls.ca ? { ca: auth.tls.ca } : {}), ...(auth.tls.cert ? { cert: auth.tls.cert } : {}), ...(auth.tls.key ? { key: auth.tls.key } : {}) } } : {}),
  };
}
