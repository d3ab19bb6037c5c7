/**
 * `chain-node sink postgres --config sink.toml` (issue 32): a separate process, a client of the aggregate API (the
 * node, or a relay for the change feed), that lands each configured processor's collections in PostgreSQL exactly
 * once. One ProcessorSink per processor, each on its own connection; `/metrics` and `/health/*` on a loopback
 * listener. SIGINT/SIGTERM: no new batch is started, the open transactions finish (and are acknowledged), the
 * connections close, exit 0; a failure no retry can cure stops every processor and exits 1 with its reason.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createNodeClient } from '../../api/client/index.js';
import { createLogger, errorFields, redactUrl, type Logger } from '../../runtime/log.js';
import { onStopSignals } from '../../runtime/stop-signals.js';
import type { LoadedSinkConfig } from './config.js';
import { ensureCursorTable } from './cursor-store.js';
import { createSinkMetrics } from './metrics.js';
import { clientConfig, describeTarget } from './pg-connection.js';
import { ProcessorSink } from './processor-sink.js';

export interface SinkHandle {
  /** The port of `/metrics` (the configured one, or the one picked for port 0); null when off. */
  readonly metricsPort: number | null;
  /** Settles when every processor stopped: resolves after `stop`, rejects with the first failure that stopped the sink. */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  return { host: address.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(address.slice(colon + 1)) };
}

async function serveMetrics(address: string, registry: Registry, readiness: () => { ready: boolean; processors: Array<{ id: string; state: string }> }): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/metrics') {
      registry.metrics().then((text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text), () => response.writeHead(500).end());
    } else if (path === '/health/live') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'live', role: 'sink' }));
    } else if (path === '/health/ready') {
      const report = readiness();
      response.writeHead(report.ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: report.ready ? 'ready' : 'not_ready', role: 'sink', processors: report.processors }));
    } else {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found: /metrics, /health/live, /health/ready"}');
    }
  });
  const { host, port } = splitAddress(address);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new Error(`cannot listen on ${address} (metrics.listen): ${error.message}`)));
    server.listen({ host, port, exclusive: true }, resolve);
  });
  return server;
}

export async function startSink(loaded: LoadedSinkConfig, log: Logger, tty: { write(text: string): unknown } | null = null): Promise<SinkHandle> {
  const { config } = loaded;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'chain_node_sink_process_' });
  const metrics = createSinkMetrics(registry);
  const pgConfig = clientConfig(config.postgres);
  log.info('sink starting', {
    postgres: describeTarget(config.postgres), schema: config.postgres.schema, node: redactUrl(config.node.url),
    follow: redactUrl(config.node.follow_url || config.node.url), processors: config.processors.map((p) => p.id), consumer: config.consumer.id,
  });

  const setup = new pg.Client(pgConfig);
  try {
    await setup.connect();
    await ensureCursorTable(setup, config.postgres.schema);
  } catch (error) {
    throw new Error(`cannot prepare PostgreSQL at ${describeTarget(config.postgres)} (schema ${config.postgres.schema}): ${(error as Error).message}`);
  } finally {
    await setup.end().catch(() => undefined);
  }

  const token = loaded.apiToken ?? undefined;
  const node = createNodeClient({ baseUrl: config.node.url, ...(token ? { token } : {}) });
  const follow = config.node.follow_url === '' ? node : createNodeClient({ baseUrl: config.node.follow_url, ...(token ? { token } : {}) });
  const abort = new AbortController();
  const sinks = config.processors.map((entry) => new ProcessorSink({ entry, config, node, follow, credential: loaded.credential, pgConfig, log, metrics, tty, signal: abort.signal }));
  const runs = sinks.map((sink) => sink.run().catch((error: unknown) => {
    log.error('sink stopped', { processor: sink.id, ...errorFields(error) });
    abort.abort();
    throw error;
  }));
  const done = Promise.allSettled(runs).then((results) => {
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  });

  const server = config.metrics.listen === '' ? null : await serveMetrics(config.metrics.listen, registry, () => {
    const processors = sinks.map((sink) => ({ id: sink.id, state: sink.current }));
    return { ready: processors.every((p) => p.state === 'following'), processors };
  }).catch(async (error: unknown) => {
    abort.abort();
    await done.catch(() => undefined);
    throw error;
  });
  if (server) log.info('metrics listening', { address: config.metrics.listen, port: (server.address() as AddressInfo).port });
  done.catch(() => undefined).finally(() => server?.close());

  return {
    metricsPort: server ? (server.address() as AddressInfo).port : null,
    done,
    async stop() {
      abort.abort();
      await done.catch(() => undefined);
      server?.closeAllConnections();
    },
  };
}

/** Runs the sink until SIGINT/SIGTERM (exit 0 once the open transactions finished) or a failure (exit 1). */
export async function runSink(loaded: LoadedSinkConfig): Promise<void> {
  const log = createLogger({ lane: 'sink', level: loaded.config.log.level, maxLinesPerSecond: loaded.config.log.max_lines_per_second });
  const tty = process.stderr.isTTY ? process.stderr : null;
  const sink = await startSink(loaded, log, tty);
  let signalled = false;
  onStopSignals({
    log,
    second: (signal) => {
      log.warn('second signal: exiting without waiting for the open transactions', { signal });
      process.exit(1);
    },
    first: (signal) => {
      signalled = true;
      log.info('stopping: finishing the open transactions', { signal });
      const timer = setTimeout(() => {
        log.error('stop overran sink.shutdown_timeout_seconds; exiting (PostgreSQL rolls back what was not committed)', { seconds: loaded.config.sink.shutdown_timeout_seconds });
        process.exit(1);
      }, loaded.config.sink.shutdown_timeout_seconds * 1000);
      timer.unref();
      void sink.stop().then(() => {
        log.info('stopped');
        process.exit(0);
      });
    },
  });
  sink.done.then(() => undefined, (error: unknown) => {
    if (signalled) return;
    process.stderr.write(`chain-node sink: stopped: ${(error as Error).message}\n`);
    process.exit(1);
  });
}
