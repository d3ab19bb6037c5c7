/**
 * Lane `listener`: serves the aggregate API (status, capabilities, processors, change pages, typed
 * blob queries), the SSE change stream and the operational routes on uWebSockets.js, reading LMDB
 * directly from this worker.
 *
 * Accepts ListenerInbox (messages.ts):
 *   `changes` ChangesNotice {processor: <processor id>, sequence}: the processor's change log grew to
 *             `sequence` (inclusive) and is committed; open SSE streams of that processor advance.
 *   `lanes`   LaneTroublesNotice {troubles: processor id → {state, reason}}: from the root whenever a lane's
 *             health changes; coverage reports `degraded`/`failed` for processors in trouble.
 * Sends to `snapshots`: ask `create` / `release` (query-and-follow; actors/snapshots/messages.ts, client.ts).
 * Asks `source`: `network-status` → P2pSnapshot (kind = p2p, for /v1/network/status; actors/sources/messages.ts).
 * Sends to `node`: ask `readiness` → ReadinessReport, ask `metrics` → Prometheus text,
 * `listening {listener, address, port}` (actors/node/messages.ts). Asks `outbox` for every change to a consumer record
 * (actors/outbox/messages.ts, client.ts); reads records and change bytes itself. Asks `history` for the admin routes
 * (api/admin/admin-routes.ts, actors/history/messages.ts); asks `processor.<id>` for checkpoints, savepoints and
 * artifacts (actors/processor/messages.ts).
 */
import { defineActor, unknownTag, type ActorContext } from '../../runtime/actor.js';
import { errorFields } from '../../runtime/log.js';
import { openStore, type Store } from '../../store/store.js';
import { epochToHex } from '../../store/meta.js';
import { operationalRoutes } from '../../api/operational.js';
import { networkStatusRoutes, type LiveSourceKind } from '../../api/network-status.js';
import { closeApp, closeListenSocket, createApiApp, listen, type ApiApp } from '../../api/server.js';
import { aggregateRoutes } from '../../api/aggregate/aggregate-routes.js';
import type { AggregateContext } from '../../api/aggregate/aggregate-context.js';
import { createProcessorRegistry, type ConfiguredProcessor } from '../../api/aggregate/configured-processors.js';
import { storeServingLookup } from '../../api/aggregate/serving-instances.js';
import { SseHub, type SseSettings } from '../../api/sse/sse-hub.js';
import { registerStreamRoute, STREAM_ROUTE } from '../../api/sse/stream-route.js';
import { storeChangeFeed } from '../../api/aggregate/change-feed.js';
import { nodeConsumers } from '../../api/aggregate/consumers/node-consumers.js';
import type { ListenerInbox } from './messages.js';
import type { HistoryInbox } from '../history/messages.js';
import type { ProcessorInbox } from '../processor/messages.js';
import type { NodeInbox, NodeReplies } from '../node/messages.js';
import type { SourceReplies, P2pSourceInbox } from '../sources/messages.js';
import { setLaneTroubles } from '../../api/aggregate/lane-health.js';
import { setPublicationStatus } from '../../api/aggregate/publication-status.js';
import type { RpcHistoryCapability, RpcServedLimits } from '../../api/aggregate/rpc-method-capabilities.js';
import { snapshotService } from '../snapshots/client.js';
import type uWS from 'uWebSockets.js';
import { bearerCheck } from '../../api/auth/bearer.js';
import { consumerRoutes } from '../../api/aggregate/consumers/consumer-routes.js';
import { consumerWrites } from '../outbox/client.js';
import { kindSurfaces } from '../kinds/kind-catalog.js';
import { CodedError } from '../../runtime/errors.js';
import { HttpError } from '../../api/errors.js';
import { adminRoutes } from '../../api/admin/admin-routes.js';
import { createListenerMetrics } from './metrics.js';

export interface ListenerArgs {
  readonly address: string;
  readonly dataDir: string;
  readonly maxBodyBytes: number;
  readonly maxUrlBytes: number;
  readonly drainMs: number;
  /** The chain this node serves (every cursor and coverage names it). */
  readonly chainId: number;
  /** The network name, as in BlobsBlock.network. */
  readonly network: string;
  /** `[[processors]]`, with `instance` defaulted to the id and `startBlock` null when not configured. */
  readonly processors: readonly ConfiguredProcessor[];
  /** `[limits]` default_page_limit, max_page_limit, max_block_range. */
  readonly defaultPageLimit: number;
  readonly maxPageLimit: number;
  readonly maxBlockRange: number;
  /** `[sse]` heartbeat_seconds, max_buffered_bytes, batch_changes. */
  readonly sse: SseSettings;
  /** `[listeners]` rpc_http and rpc_ws (host:port), reported by /v1/capabilities. */
  readonly rpcHttp: string;
  readonly rpcWs: string;
  /** The API bearer token (from `auth.token_file`), or null: then no route asks for one. Never logged. */
  readonly apiToken?: string | null;
  /** The `[rpc]` limits when the JSON-RPC lane runs (absent: capabilities report it unavailable). */
  readonly rpcLimits?: RpcServedLimits;
  /** On-demand JSON-RPC history as configured (capabilities). */
  readonly rpcHistory?: RpcHistoryCapability;
  /** `sources.live.kind`, for /v1/network/status (default devnet). */
  readonly liveSource?: LiveSourceKind;
}

interface State {
  readonly store: Store;
  readonly api: ApiApp;
  readonly hub: SseHub;
  readonly socket: uWS.us_listen_socket;
}

/** A write a listener asks of a processor lane: its coded errors answer as they are; a lane that does not answer is `not_ready`. */
function askProcessor(ctx: ActorContext<ListenerArgs>, processorId: string, message: ProcessorInbox): Promise<unknown> {
  return ctx.ask<ProcessorInbox>(`processor.${processorId}`, message, 60_000).catch((error: unknown) => {
    if (error instanceof CodedError) throw error;
    throw new HttpError('not_ready', `processor lane '${processorId}' did not answer: ${(error as Error).message}`);
  });
}

export default defineActor<State, ListenerArgs, ListenerInbox>({
  async init(ctx) {
    const args = ctx.args;
    const store = openStore({ dataDir: args.dataDir, readOnly: true });
    const context: AggregateContext = {
      store,
      chainId: args.chainId,
      network: args.network,
      processors: createProcessorRegistry(args.processors, storeServingLookup(store)),
      kinds: await kindSurfaces(args.processors, args.dataDir, (module, error) => ctx.log.warn('custom kind not served by this listener', { module, reason: error.message })),
      limits: { defaultPageLimit: args.defaultPageLimit, maxPageLimit: args.maxPageLimit, maxBlockRange: args.maxBlockRange },
      rpc: { http: args.rpcHttp, webSocket: args.rpcWs, ...(args.rpcLimits ? { limits: args.rpcLimits } : {}), ...(args.rpcHistory ? { history: args.rpcHistory } : {}) },
      bearer: args.apiToken ? bearerCheck(args.apiToken) : null,
      snapshots: snapshotService(ctx),
      checkpoints: {
        restore: (processorId, checkpoint) => askProcessor(ctx, processorId, { type: 'checkpoint.restore', checkpoint }),
      },
      savepoints: {
        create: (processorId, id) => askProcessor(ctx, processorId, { type: 'savepoint.create', id }),
        remove: (processorId, id) => askProcessor(ctx, processorId, { type: 'savepoint.delete', id }),
      },
      artifacts: {
        replay: (processorId, request) => askProcessor(ctx, processorId, { type: 'artifacts.replay', ...request }),
        release: (processorId, request) => askProcessor(ctx, processorId, { type: 'artifacts.release', ...request }),
        pin: (processorId, request) => askProcessor(ctx, processorId, { type: 'artifacts.pin', ...request }),
      },
    };
    const routes = [
      ...operationalRoutes({
        storeIdentity: () => {
          const epoch = store.meta.get('storeEpoch');
          if (epoch === undefined) throw new Error('the store has no epoch record');
          return { epoch: epochToHex(store.epoch), schemaVersion: store.schemaVersion };
        },
        readiness: () => ctx.ask<NodeInbox, NodeReplies['readiness']>('node', { type: 'readiness' }, 2000),
        metricsText: () => ctx.ask<NodeInbox, NodeReplies['metrics']>('node', { type: 'metrics' }, 5000),
      }),
      ...networkStatusRoutes({
        store, source: args.liveSource ?? 'devnet', processors: args.processors.map((p) => ({ id: p.id, instance: p.instance, startBlock: p.startBlock ?? null })),
        readiness: () => ctx.ask<NodeInbox, NodeReplies['readiness']>('node', { type: 'readiness' }, 2000),
        p2p: () => ctx.ask<P2pSourceInbox, SourceReplies['network-status']>('source', { type: 'network-status' }, 2000),
      }),
      ...aggregateRoutes(context),
      ...consumerRoutes(context, nodeConsumers(context, consumerWrites(ctx))),
      ...adminRoutes((message, timeoutMs) => ctx.ask<HistoryInbox>('history', message, timeoutMs)),
    ];
    const metrics = createListenerMetrics(ctx.metrics);
    const api = createApiApp({ routes, maxBodyBytes: args.maxBodyBytes, maxUrlBytes: args.maxUrlBytes, log: ctx.log, metrics, bearer: context.bearer ?? null, directRoutes: [STREAM_ROUTE] });
    const feed = storeChangeFeed(store, args.chainId);
    const hub = new SseHub({ feed, processors: args.processors, settings: args.sse, metrics: metrics.sse });
    registerStreamRoute(api.app, { processors: context.processors, bearer: context.bearer ?? null, feed }, hub, api.faults);
    const { socket, port } = await listen(api.app, args.address, { name: 'api', allow: api.methods }).catch((error: unknown) => {
      hub.close();
      closeApp(api.app);
      throw error;
    });
    await ctx.send<NodeInbox>('node', { type: 'listening', listener: 'api', address: args.address, port });
    ctx.ready();
    return { store, api, hub, socket };
  },
  handle(message, state, ctx) {
    switch (message.type) {
      case 'lanes':
        setLaneTroubles(message.troubles);
        return;
      case 'publication':
        setPublicationStatus(message);
        return;
      case 'changes':
        if (!state.hub.notify(message.processor, message.sequence, message.committedAt)) ctx.log.warn('change notice for a processor without a stream here', { processor: message.processor, sequence: message.sequence });
        return;
      default:
        throw new Error(`listener does not accept '${unknownTag(message)}'`);
    }
  },
  abort(state) {
    state.hub.close();
    closeApp(state.api.app);
  },
  async stop(state, ctx) {
    closeListenSocket(state.socket);
    const deadline = Date.now() + ctx.args.drainMs;
    while (state.api.inFlight.count > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    if (state.api.inFlight.count > 0) ctx.log.warn('stopping with requests still in flight', { inFlight: state.api.inFlight.count });
    state.hub.close();
    closeApp(state.api.app);
    try {
      await state.store.close();
    } catch (error) {
      ctx.log.warn('closing the store failed', errorFields(error));
    }
  },
});
