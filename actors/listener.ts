/**
 * Lane `listener`: serves the aggregate API and operational routes on uWebSockets.js, reading
 * LMDB directly from this worker.
 *
 * Accepts: (none yet; later lanes push change-head notices here).
 * Sends to `node`: ask `readiness` → ReadinessReport, ask `metrics` → Prometheus text,
 * `listening {listener, address, port}`.
 */
import { defineActor } from '../runtime/actor.js';
import { errorFields } from '../runtime/log.js';
import { openStore, type Store } from '../store/env.js';
import { epochToHex } from '../store/meta.js';
import { operationalRoutes, type ReadinessReport } from '../api/operational.js';
import { closeApp, closeListenSocket, createApiApp, listen, type ApiApp } from '../api/server.js';
import type uWS from 'uWebSockets.js';

export interface ListenerArgs {
  readonly address: string;
  readonly dataDir: string;
  readonly maxBodyBytes: number;
  readonly maxUrlBytes: number;
  readonly drainMs: number;
}

interface State {
  readonly store: Store;
  readonly api: ApiApp;
  readonly socket: uWS.us_listen_socket;
}

export default defineActor<State, ListenerArgs>({
  async init(ctx) {
    const args = ctx.args;
    const store = openStore({ dataDir: args.dataDir, readOnly: true });
    const routes = operationalRoutes({
      storeIdentity: () => {
        const epoch = store.meta.get('storeEpoch');
        if (epoch === undefined) throw new Error('the store has no epoch record');
        return { epoch: epochToHex(store.epoch), schemaVersion: store.schemaVersion };
      },
      readiness: () => ctx.ask<ReadinessReport>('node', { type: 'readiness' }, 2000),
      metricsText: () => ctx.ask<string>('node', { type: 'metrics' }, 5000),
    });
    const api = createApiApp({ routes, maxBodyBytes: args.maxBodyBytes, maxUrlBytes: args.maxUrlBytes, log: ctx.log, metrics: ctx.metrics });
    const { socket, port } = await listen(api.app, args.address);
    await ctx.send('node', { type: 'listening', listener: 'api', address: args.address, port });
    ctx.ready();
    return { store, api, socket };
  },
  handle(message) {
    throw new Error(`listener does not accept '${message.type}'`);
  },
  abort(state) {
    closeApp(state.api.app);
  },
  async stop(state, ctx) {
    closeListenSocket(state.socket);
    const deadline = Date.now() + ctx.args.drainMs;
    while (state.api.inFlight.count > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    if (state.api.inFlight.count > 0) ctx.log.warn('stopping with requests still in flight', { inFlight: state.api.inFlight.count });
    closeApp(state.api.app);
    try {
      await state.store.close();
    } catch (error) {
      ctx.log.warn('closing the store failed', errorFields(error));
    }
  },
});
