/**
 * The aggregate API listener's uWS application: every route of every module, the fallback for
 * unknown routes and methods, and per-route request metrics.
 */
import uWS from 'uWebSockets.js';
import type { Registry } from 'prom-client';
import { fallback, route, type HttpOptions } from './http.js';
import { patternMatches, type Route } from './routes.js';
import { guarded, type BearerCheck } from './auth/bearer.js';
import { RouteMetrics } from './route-metrics.js';
import { requestFaults, type RequestFaults } from './request-faults.js';
import type { Logger } from '../runtime/log.js';

export interface ApiServerOptions {
  readonly routes: readonly Route[];
  readonly maxBodyBytes: number;
  readonly maxUrlBytes: number;
  readonly log: Logger;
  readonly metrics: Registry;
  /** The API bearer check (api/auth/bearer.ts), or null when no token is configured; open routes skip it. */
  readonly bearer?: BearerCheck | null;
  /** Routes the caller registers on the app itself (the SSE stream), so other methods on them answer 405. */
  readonly directRoutes?: readonly Pick<Route, 'method' | 'pattern'>[];
}

export interface ApiApp {
  readonly app: uWS.TemplatedApp;
  /** The listener's request boundary (api/request-faults.ts), for routes registered on `app` directly. */
  readonly faults: RequestFaults;
  /** Requests being answered right now. */
  readonly inFlight: { count: number };
}

export function createApiApp(options: ApiServerOptions): ApiApp {
  const app = uWS.App();
  const inFlight = { count: 0 };
  const metrics = new RouteMetrics(options.metrics);
  const faults = requestFaults(options.metrics, options.log);
  const http: HttpOptions = {
    maxBodyBytes: options.maxBodyBytes, maxUrlBytes: options.maxUrlBytes, log: options.log, inFlight, faults,
    onResponse: (pattern, status, seconds) => metrics.observe(pattern, status, seconds),
  };
  for (const r of options.routes) route(app, r.method, r.pattern, r.open ? r.handler : guarded(r.handler, options.bearer ?? null), http);
  const known = [...options.routes, ...(options.directRoutes ?? [])];
  const allowed = (path: string) => [...new Set(known.filter((r) => patternMatches(r.pattern, path)).map((r) => r.method.toUpperCase()))];
  fallback(app, allowed, http);
  return { app, inFlight, faults };
}

/** Listens on `host:port`; resolves with the listen socket and the port actually bound (for port 0). */
export function listen(app: uWS.TemplatedApp, address: string): Promise<{ socket: uWS.us_listen_socket; port: number }> {
  const separator = address.lastIndexOf(':');
  const host = address.slice(0, separator).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(separator + 1));
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (socket === false) reject(new Error(`cannot listen on ${address}: address in use or not available`));
      else resolve({ socket, port: uWS.us_socket_local_port(socket as unknown as uWS.us_socket) });
    });
  });
}

export function closeListenSocket(socket: uWS.us_listen_socket): void {
  uWS.us_listen_socket_close(socket);
}

/**
 * Closes every connection of the app (idle keep-alive ones too). A worker must do this before
 * it exits: a uWS socket left open aborts the process when the worker's event loop closes.
 * `close()` exists in this uWS build but is missing from its typings.
 */
export function closeApp(app: uWS.TemplatedApp): void {
  (app as uWS.TemplatedApp & { close(): void }).close();
}
