/**
 * Lane `rpc`: Ethereum JSON-RPC over HTTP (`listeners.rpc_http`) and WebSocket (`listeners.rpc_ws`)
 * on uWebSockets.js, answered from the verified chain tables read directly in this worker, with
 * `newHeads` / `logs` subscriptions fed by the chain journal. Several instances may share the ports.
 *
 * Accepts RpcInbox (messages.ts):
 *   `journal` JournalNotice {sequence}: from `chain` after each committed decision; subscriptions
 *             publish the journal's moves up to `sequence` (undo moves first, as the journal holds them).
 *   `history.filled` {id, error}: from `history`, the end of an on-demand history request.
 * Sends to `node`: `listening {listener, address, port}` for each of its two listeners (actors/node/messages.ts).
 * Sends to `history` (on-demand history, when configured; actors/history/messages.ts): `rpc.fill` {id, from, to} and `rpc.locate` {id, kind, hash}
 *   for the holes a request found (api/rpc/history-hole.ts); the request is answered again once they are filled.
 */
import type uWS from 'uWebSockets.js';
import { defineActor, unknownTag } from '../../runtime/actor.js';
import { errorFields } from '../../runtime/log.js';
import { openStore, type Store } from '../../store/store.js';
import { capabilitiesBody } from '../../api/aggregate/capabilities.js';
import { createProcessorRegistry, type ConfiguredProcessor } from '../../api/aggregate/configured-processors.js';
import type { RpcHistoryCapability, RpcServedLimits } from '../../api/aggregate/rpc-method-capabilities.js';
import { holeKey, type HistoryFiller, type HoleRequest } from '../../api/rpc/history-hole.js';
import { limitExceeded, rangeIncomplete, RpcError, sourceUnavailable, unsupported } from '../../api/rpc/rpc-errors.js';
import type { FillError, RpcInbox } from './messages.js';
import type { FillMessage, HistoryInbox, LocateMessage } from '../history/messages.js';
import type { NodeInbox } from '../node/messages.js';
import { closeApp, closeListenSocket, listen } from '../../api/server.js';
import { createRpcContext, type RpcChain } from '../../api/rpc/rpc-context.js';
import type { BlockCacheLimits } from '../../api/rpc/chain-reader.js';
import { createRpcServers, RPC_HTTP_METHODS, RPC_WS_METHODS, type RpcServers } from '../../api/rpc/rpc-server.js';
import { createRpcMetrics } from './metrics.js';

export interface RpcArgs {
  readonly httpAddress: string;
  readonly wsAddress: string;
  readonly dataDir: string;
  readonly drainMs: number;
  readonly chain: RpcChain;
  readonly network: string;
  readonly limits: RpcServedLimits;
  readonly blockCache: BlockCacheLimits;
  /** What `node_getCapabilities` reports (the same as `/v1/capabilities`). */
  readonly processors: readonly ConfiguredProcessor[];
  readonly pageLimits: { readonly defaultPageLimit: number; readonly maxPageLimit: number; readonly maxBlockRange: number };
  /** On-demand history (`[history]`); null or absent: off. */
  readonly history?: RpcHistoryArgs | null;
}

export interface RpcHistoryArgs {
  readonly maxBlocks: number;
  readonly locator: boolean;
  readonly timeoutMs: number;
  readonly maxPending: number;
}

interface State {
  readonly pending: Map<number, (error: FillError | null) => void>;
  readonly store: Store;
  readonly servers: RpcServers;
  readonly sockets: uWS.us_listen_socket[];
}

function closeServers(servers: RpcServers): void {
  servers.hub.close();
  closeApp(servers.http);
  closeApp(servers.ws);
}

export default defineActor<State, RpcArgs, RpcInbox>({
  async init(ctx) {
    const args = ctx.args;
    const store = openStore({ dataDir: args.dataDir, readOnly: true });
    const processors = createProcessorRegistry(args.processors);
    const capabilities = (): unknown => capabilitiesBody({
      store, chainId: args.chain.chainId, network: args.network, processors, limits: args.pageLimits,
      rpc: { http: args.httpAddress, webSocket: args.wsAddress, limits: args.limits, history: historyCapability(args.history ?? null) },
    });
    const pending = new Map<number, (error: FillError | null) => void>();
    const context = createRpcContext({
      store, chain: args.chain, capabilities, blockCache: args.blockCache,
      history: args.history ? { maxBlocks: args.history.maxBlocks, locator: args.history.locator } : null,
      limits: { maxBatchRequests: args.limits.maxBatchRequests, maxLogsBlockRange: args.limits.maxLogsBlockRange, maxLogsResults: args.limits.maxLogsResults },
    });
    const servers = createRpcServers({
      context, maxBodyBytes: args.limits.maxRequestBodyBytes, wsMaxBufferedBytes: args.limits.wsMaxBufferedBytes,
      maxSubscriptionsPerConnection: args.limits.maxSubscriptionsPerConnection, log: ctx.log, metrics: createRpcMetrics(ctx.metrics),
      ...(args.history ? { fillHistory: historyFiller(args.history, pending, (message) => ctx.send<HistoryInbox>('history', message)) } : {}),
    });
    const sockets: uWS.us_listen_socket[] = [];
    try {
      const http = await listen(servers.http, args.httpAddress, { name: 'rpc_http', allow: RPC_HTTP_METHODS });
      sockets.push(http.socket);
      const ws = await listen(servers.ws, args.wsAddress, { name: 'rpc_ws', allow: RPC_WS_METHODS });
      sockets.push(ws.socket);
      await ctx.send<NodeInbox>('node', { type: 'listening', listener: 'rpc_http', address: args.httpAddress, port: http.port });
      await ctx.send<NodeInbox>('node', { type: 'listening', listener: 'rpc_ws', address: args.wsAddress, port: ws.port });
    } catch (error) {
      closeServers(servers);
      await store.close();
      throw error;
    }
    ctx.ready();
    return { pending, store, servers, sockets };
  },
  handle(message, state) {
    switch (message.type) {
      case 'history.filled':
        state.pending.get(message.id)?.(message.error);
        return;
      case 'journal':
        state.servers.hub.onJournal(message.sequence);
        return;
      default:
        throw new Error(`rpc does not accept '${unknownTag(message)}'`);
    }
  },
  abort(state) {
    closeServers(state.servers);
  },
  async stop(state, ctx) {
    for (const socket of state.sockets) closeListenSocket(socket);
    const deadline = Date.now() + ctx.args.drainMs;
    while (state.servers.inFlight.count > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    closeServers(state.servers);
    try {
      await state.store.close();
    } catch (error) {
      ctx.log.warn('closing the store failed', errorFields(error));
    }
  },
});

function historyCapability(history: RpcHistoryArgs | null): RpcHistoryCapability {
  return { onDemand: history !== null, locator: history?.locator ?? false };
}

/** The JSON-RPC error a failed on-demand request answers with. */
function fillFailure(error: FillError): RpcError {
  const details = error.blockNumber !== undefined ? { block: error.blockNumber } : {};
  switch (error.code) {
    case 'query_too_expensive': return limitExceeded(error.message, details);
    case 'unsupported_capability': return unsupported('on-demand history', 'history_source_unavailable', error.message);
    case 'range_incomplete': return rangeIncomplete(error.message, details);
    default: return sourceUnavailable(error.message, details);
  }
}

/**
 * Asks the history lane for every distinct hole of a body at once (at most `maxPending` waiting per worker) and
 * resolves with the first failure, or null when all are filled. Each waits at most the on-demand timeout: the
 * history lane answers at its deadline; this timer (one second later) is the backstop should that answer never come.
 */
function historyFiller(args: RpcHistoryArgs, pending: Map<number, (error: FillError | null) => void>, send: (message: FillMessage | LocateMessage) => Promise<void>): HistoryFiller {
  let nextId = 1;
  const fillOne = (hole: HoleRequest) => new Promise<RpcError | null>((resolve) => {
    if (pending.size >= args.maxPending) {
      resolve(limitExceeded(`${pending.size} on-demand history requests are in flight on this worker, the most it waits on; retry shortly`, { limit: args.maxPending, retryable: true }));
      return;
    }
    const id = nextId++;
    const timer = setTimeout(() => done({ code: 'source_unavailable', message: `on-demand history did not finish within ${args.timeoutMs / 1000} s` }), args.timeoutMs + 1_000);
    const done = (error: FillError | null) => {
      if (!pending.delete(id)) return;
      clearTimeout(timer);
      resolve(error ? fillFailure(error) : null);
    };
    pending.set(id, done);
    const message: FillMessage | LocateMessage = hole.kind === 'range' ? { type: 'rpc.fill', id, from: hole.from, to: hole.to } : { type: 'rpc.locate', id, kind: hole.kind, hash: hole.hash };
    send(message).catch((error: Error) => done({ code: 'source_unavailable', message: `the history lane is not available: ${error.message}` }));
  });
  return async (holes) => {
    const unique = new Map(holes.map((hole) => [holeKey(hole), hole]));
    const failures = await Promise.all([...unique.values()].map(fillOne));
    return failures.find((failure) => failure !== null) ?? null;
  };
}
