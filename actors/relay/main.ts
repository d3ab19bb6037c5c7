/**
 * `chain-node relay --config relay.toml` (issue 30, README "Scaling out"): a stateless process — no store, no chain
 * — that serves a node's delivery routes from NATS JetStream: `/v1/processors/{p}/changes`, `/changes/head`,
 * `/stream` and durable consumers, with the node's own envelope bytes and cursors, so a client may move between
 * the node and any relay. Many relays behind a load balancer share one feed.
 *
 * One thread: the uWS listener, the SSE hub (the node's, api/sse/) over the relay's feed (relay-feed.ts), the
 * descriptor watch and one subject copy per published instance. Stops on SIGINT/SIGTERM: no new requests, open
 * streams ended, open requests given `shutdown_timeout_seconds`, the NATS connection drained.
 */
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { bearerCheck } from '../../api/auth/bearer.js';
import { changesRoutes } from '../../api/aggregate/changes-routes.js';
import { consumerRoutes } from '../../api/aggregate/consumers/consumer-routes.js';
import { HttpError } from '../../api/errors.js';
import { ConsumerRecords } from '../../net/jetstream/consumer-records.js';
import { relayConsumers } from './relay-consumers.js';
import { openApiRoutes } from '../../api/openapi-route.js';
import { addressTaken, closeApp, closeListenSocket, createApiApp, listen } from '../../api/server.js';
import { SseHub } from '../../api/sse/sse-hub.js';
import { registerStreamRoute, STREAM_ROUTE } from '../../api/sse/stream-route.js';
import { natsConnectionOptions } from '../../net/jetstream/connection.js';
import { DescriptorWatch } from '../../net/jetstream/descriptors.js';
import { createLogger, errorFields, type Logger } from '../../runtime/log.js';
import { onStopSignals } from '../../runtime/stop-signals.js';
import { createListenerMetrics } from '../listener/metrics.js';
import type { LoadedRelayConfig } from './config.js';
import { createRelayMetrics } from './metrics.js';
import { RelayFeed } from './relay-feed.js';
import { relayOperationalRoutes } from './relay-routes.js';

export interface RelayHandle {
  /** The port the API listens on (the configured one, or the one picked for port 0). */
  readonly port: number;
  stop(): Promise<void>;
}

export async function startRelay(loaded: LoadedRelayConfig, log: Logger): Promise<RelayHandle> {
  const { config } = loaded;
  const js = config.delivery.jetstream;
  const taken = await addressTaken(config.listeners.api);
  if (taken) throw new Error(`cannot listen on ${config.listeners.api}: ${taken}`);

  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'chain_node_relay_process_' });
  const metrics = createListenerMetrics(registry);
  const relayMetrics = createRelayMetrics(registry);

  const nc = await connect({ ...natsConnectionOptions(js.servers, 'chain-node relay', loaded.natsSecrets), waitOnFirstConnect: true });
  let connected = true;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        connected = false;
        log.warn('NATS connection lost; reconnecting', { server: String((status as { server?: string }).server ?? '') });
      } else if (status.type === 'reconnect') {
        connected = true;
        log.info('NATS connection restored', { server: String((status as { server?: string }).server ?? '') });
      }
    }
  })();
  const jsm = await jetstreamManager(nc, { timeout: js.ack_timeout_ms });
  const client = jetstream(nc, { timeout: js.ack_timeout_ms });

  let hub: SseHub | null = null;
  const feed: RelayFeed = new RelayFeed({
    js: client, jsm, stream: js.stream, cacheBytes: config.relay.cache_bytes, log,
    wake: (instance, last, committedAt, live) => {
      relayMetrics.copiedSequence.set({ instance }, Number(feed.copiedHead(instance)));
      if (live && committedAt) relayMetrics.commitToCopySeconds.observe(Math.max(0, Date.now() - committedAt) / 1000);
      hub?.notify(instance, last === undefined ? undefined : Number(last), committedAt ?? undefined);
    },
    reset: (instance, reason) => {
      relayMetrics.resets.inc({ instance, reason });
      log.warn('a published change feed was reset', { instance, reason });
      if (!hub || reason !== 'epoch_changed') {
        hub?.notify(instance);
        return;
      }
      const processor = feed.state().find((p) => p.instance === instance);
      if (!processor) return;
      const served = feed.registry.byId(processor.id);
      hub.endStreams(instance, hub.resetFrame(served, { code: 'reset_required', message: 'the node serving this feed was restored from a backup (a new store epoch): positions of the old one name nothing here; take a snapshot and resubscribe', details: { action: 'snapshot and resubscribe' } }));
    },
  });
  hub = new SseHub({ feed, processors: [], settings: { heartbeatSeconds: config.sse.heartbeat_seconds, maxBufferedBytes: config.sse.max_buffered_bytes, batchChanges: config.sse.batch_changes }, metrics: metrics.sse });

  const abort = new AbortController();
  let watch: DescriptorWatch | null = null;
  const watching = DescriptorWatch.open(client, js.descriptor_bucket, (descriptor) => feed.describe(descriptor), 500, abort.signal).then((opened) => {
    watch = opened;
    log.info('reading the node\'s descriptors', { bucket: js.descriptor_bucket, processors: opened.all().length });
  }, () => undefined);

  // The durable consumers' records (created when missing); until the bucket opens, consumer calls answer not_ready.
  let records: ConsumerRecords | null = null;
  const opening = (async () => {
    for (let delay = 500; !abort.signal.aborted; delay = Math.min(delay * 2, 10_000)) {
      try {
        records = await ConsumerRecords.open(client, jsm, config.relay.consumer_bucket, js.replicas, js.stream);
        return;
      } catch (error) {
        log.warn('cannot open the consumer bucket; consumer calls answer not_ready', { bucket: config.relay.consumer_bucket, ...errorFields(error), retryMs: delay });
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  })();
  const openRecords = (): ConsumerRecords => {
    if (!records) throw new HttpError('not_ready', `this relay has not opened its consumer bucket ${config.relay.consumer_bucket} yet; retry shortly`);
    return records;
  };

  const bearer = loaded.apiToken ? bearerCheck(loaded.apiToken) : null;
  const limits = { defaultPageLimit: config.limits.default_page_limit, maxPageLimit: config.limits.max_page_limit, maxBlockRange: config.limits.max_block_range };
  const routes = [
    ...relayOperationalRoutes({
      readiness: () => {
        const reasons: string[] = [];
        if (!connected) reasons.push('not connected to a NATS server');
        if (!records) reasons.push(`the consumer bucket ${config.relay.consumer_bucket} is not open yet`);
        if (!watch) reasons.push(`the descriptor bucket ${js.descriptor_bucket} is not readable yet (has the node published?)`);
        else if (!watch.loaded) reasons.push(`the descriptor bucket ${js.descriptor_bucket} is still being read`);
        const processors = feed.state();
        if (watch && processors.length === 0) reasons.push('no processor is published yet');
        for (const p of processors) if (!p.caughtUp) reasons.push(`processor '${p.id}' is still being read from ${p.subject}`);
        return { ready: reasons.length === 0, reasons, processors: processors.map((p) => ({ id: p.id, instance: p.instance, subject: p.subject, caughtUp: p.caughtUp, head: p.head.toString() })) };
      },
      metricsText: async () => {
        relayMetrics.cacheBytes.set(feed.cache.bytes);
        return registry.metrics();
      },
    }),
    ...openApiRoutes(),
    ...changesRoutes({ processors: feed.registry, limits }, feed),
    ...consumerRoutes({ processors: feed.registry, limits, bearer }, relayConsumers(feed, openRecords, log)),
  ];
  const api = createApiApp({ routes, maxBodyBytes: config.limits.max_request_body_bytes, maxUrlBytes: config.limits.max_url_bytes, log, metrics, bearer, directRoutes: [STREAM_ROUTE] });
  registerStreamRoute(api.app, { processors: feed.registry, bearer, feed }, hub, api.faults);
  const { socket, port } = await listen(api.app, config.listeners.api, { name: 'api', allow: api.methods });
  log.info('relay listening', { address: config.listeners.api, port, stream: js.stream });

  let stopping: Promise<void> | null = null;
  return {
    port,
    stop: () => {
      stopping ??= (async () => {
        closeListenSocket(socket);
        hub?.close();
        const deadline = Date.now() + config.relay.shutdown_timeout_seconds * 1000;
        while (api.inFlight.count > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        abort.abort();
        watch?.stop();
        await watching;
        await opening;
        await feed.stop();
        await nc.drain().catch(() => nc.close());
        closeApp(api.app);
      })();
      return stopping;
    },
  };
}

/** Runs a relay until SIGINT/SIGTERM (a second signal exits at once). */
export async function runRelay(loaded: LoadedRelayConfig): Promise<void> {
  const log = createLogger({ lane: 'relay', level: loaded.config.log.level, maxLinesPerSecond: loaded.config.log.max_lines_per_second });
  const relay = await startRelay(loaded, log);
  onStopSignals({
    log,
    second: (signal) => {
      log.warn('second signal: exiting without a graceful stop', { signal });
      process.exit(1);
    },
    first: (signal) => {
      log.info('stopping', { signal });
      relay.stop().then(() => process.exit(0), (error: unknown) => {
        log.error('stop failed', errorFields(error));
        process.exit(1);
      });
    },
  });
}
