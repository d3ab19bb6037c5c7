/**
 * Lane `rpc`: Ethereum JSON-RPC over HTTP (`listeners.rpc_http`) and WebSocket (`listeners.rpc_ws`)
 * on uWebSockets.js, answered from the verified chain tables read directly in this worker, with
 * `newHeads` / `logs` subscriptions fed by the chain journal. Several instances may share the ports.
 *
 * Accepts:
 *   `journal` JournalNotice {sequence}: from `chain` after each committed decision; subscriptions
 *             publish the journal's moves up to `sequence` (undo moves first, as the journal holds them).
 * Sends to `node`: `listening {listener, address, port}` for each of its two listeners.
 */
import type uWS from 'uWebSockets.js';
import { defineActor } from '../runtime/actor.js';
import { errorFields } from '../runtime/log.js';
import { openStore, type Store } from '../store/env.js';
import { capabilitiesBody } from '../api/aggregate/capabilities.js';
import { createProcessorRegistry, type ConfiguredProcessor } from '../api/aggregate/configured-processors.js';
import type { RpcServedLimits } from '../api/aggregate/rpc-method-capabilities.js';
import { closeApp, closeListenSocket, listen } from '../api/server.js';
import { createRpcContext, type RpcChain } from '../api/rpc/rpc-context.js';
import { createRpcServers, RPC_HTTP_METHODS, RPC_WS_METHODS, type RpcServers } from '../api/rpc/rpc-server.js';
import type { JournalNotice } from './chain-messages.js';

export interface RpcArgs {
  readonly httpAddress: string;
  readonly wsAddress: string;
  readonly dataDir: string;
  readonly drainMs: number;
  readonly chain: RpcChain;
  readonly network: string;
  readonly limits: RpcServedLimits;
  readonly blockCacheEntries: number;
  /** What `node_getCapabilities` reports (the same as `/v1/capabilities`). */
  readonly processors: readonly ConfiguredProcessor[];
  readonly pageLimits: { readonly defaultPageLimit: number; readonly maxPageLimit: number; readonly maxBlockRange: number };
}

interface State {
  readonly store: Store;
  readonly servers: RpcServers;
  readonly sockets: uWS.us_listen_socket[];
}

function closeServers(servers: RpcServers): void {
  servers.hub.close();
  closeApp(servers.http);
  closeApp(servers.ws);
}

export default defineActor<State, RpcArgs>({
  async init(ctx) {
    const args = ctx.args;
    const store = openStore({ dataDir: args.dataDir, readOnly: true });
    const capabilities = capabilitiesBody({
      store, chainId: args.chain.chainId, network: args.network, processors: createProcessorRegistry(args.processors), limits: args.pageLimits,
      rpc: { http: args.httpAddress, webSocket: args.wsAddress, limits: args.limits },
    });
    const context = createRpcContext({
      store, chain: args.chain, capabilities, blockCacheEntries: args.blockCacheEntries,
      limits: { maxBatchRequests: args.limits.maxBatchRequests, maxLogsBlockRange: args.limits.maxLogsBlockRange, maxLogsResults: args.limits.maxLogsResults },
    });
    const servers = createRpcServers({
      context, maxBodyBytes: args.limits.maxRequestBodyBytes, wsMaxBufferedBytes: args.limits.wsMaxBufferedBytes,
      maxSubscriptionsPerConnection: args.limits.maxSubscriptionsPerConnection, log: ctx.log, metrics: ctx.metrics,
    });
    const sockets: uWS.us_listen_socket[] = [];
    try {
      const http = await listen(servers.http, args.httpAddress, { name: 'rpc_http', allow: RPC_HTTP_METHODS });
      sockets.push(http.socket);
      const ws = await listen(servers.ws, args.wsAddress, { name: 'rpc_ws', allow: RPC_WS_METHODS });
      sockets.push(ws.socket);
      await ctx.send('node', { type: 'listening', listener: 'rpc_http', address: args.httpAddress, port: http.port });
      await ctx.send('node', { type: 'listening', listener: 'rpc_ws', address: args.wsAddress, port: ws.port });
    } catch (error) {
      closeServers(servers);
      await store.close();
      throw error;
    }
    ctx.ready();
    return { store, servers, sockets };
  },
  handle(message, state) {
    if (message.type !== 'journal') throw new Error(`rpc does not accept '${message.type}'`);
    state.servers.hub.onJournal((message as unknown as JournalNotice).sequence);
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
