/**
 * The aggregate API listener's uWS application: every route of every module, the fallback for
 * unknown routes and methods, and per-route request metrics.
 */
import uWS from 'uWebSockets.js';
import { createServer } from 'node:net';
import { fallback, route, type HttpOptions } from './http.js';
import { patternMatches, type Route } from './routes.js';
import { guarded, type BearerCheck } from './auth/bearer.js';
import type { RouteMetrics } from './route-metrics.js';
import { guardPort, type GuardedListener } from './http-guard.js';
import { requestFaults, type RequestFaults, type RequestFaultsMetrics } from './request-faults.js';
import type { Logger } from '../runtime/log.js';

export interface ApiServerOptions {
  readonly routes: readonly Route[];
  readonly maxBodyBytes: number;
  readonly maxUrlBytes: number;
  readonly log: Logger;
  readonly metrics: ApiServerMetrics;
  /** The API bearer check (api/auth/bearer.ts), or null when no token is configured; open routes skip it. */
  readonly bearer?: BearerCheck | null;
  /** Routes the caller registers on the app itself (the SSE stream), so other methods on them answer 405. */
  readonly directRoutes?: readonly Pick<Route, 'method' | 'pattern'>[];
}

/** What the API listener updates; the listener lane declares it (actors/listener/metrics.ts). */
export interface ApiServerMetrics extends RequestFaultsMetrics {
  /** Per-route requests and durations. */
  readonly routes: RouteMetrics;
}

export interface ApiApp {
  readonly app: uWS.TemplatedApp;
  /** The listener's request boundary (api/request-faults.ts), for routes registered on `app` directly. */
  readonly faults: RequestFaults;
  /** Requests being answered right now. */
  readonly inFlight: { count: number };
  /** Every method some route serves (the `Allow` of the HTTP guard's 405 for a method uWS cannot parse). */
  readonly methods: readonly string[];
}

export function createApiApp(options: ApiServerOptions): ApiApp {
  const app = uWS.App();
  const inFlight = { count: 0 };
  const metrics = options.metrics.routes;
  const faults = requestFaults(options.metrics, options.log);
  const http: HttpOptions = {
    maxBodyBytes: options.maxBodyBytes, maxUrlBytes: options.maxUrlBytes, log: options.log, inFlight, faults,
    onResponse: (pattern, status, seconds) => metrics.observe(pattern, status, seconds),
  };
  for (const r of options.routes) route(app, r.method, r.pattern, r.open ? r.handler : guarded(r.handler, options.bearer ?? null), http);
  const known = [...options.routes, ...(options.directRoutes ?? [])];
  const allowed = (path: string) => [...new Set(known.filter((r) => patternMatches(r.pattern, path)).map((r) => r.method.toUpperCase()))];
  fallback(app, allowed, http);
  const methods = [...new Set(known.map((r) => r.method.toUpperCase()))];
  return { app, inFlight, faults, methods };
}

/** `host:port` or `[v6]:port` → its parts. */
function splitAddress(address: string): { host: string; port: number } {
  const separator = address.lastIndexOf(':');
  return { host: address.slice(0, separator).replace(/^\[|\]$/g, ''), port: Number(address.slice(separator + 1)) };
}

/**
 * Whether something else already listens on `address`. uWS binds with SO_REUSEPORT (so that
 * listener instances in several workers share a port), which lets a second node bind a taken port
 * without an error and take part of its traffic. A plain bind without SO_REUSEPORT fails on a port
 * that anyone holds, so the node tries one, closes it at once, and refuses to start on a taken port.
 * Port 0 (any free port) is never taken.
 */
export function addressTaken(address: string): Promise<string | null> {
  const { host, port } = splitAddress(address);
  if (port === 0) return Promise.resolve(null);
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE' ? 'another process already listens on it' : null));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/**
 * Listens on `host:port`; resolves with the listen socket, the port actually bound (for port 0) and,
 * when the HTTP guard (api/http-guard.ts) could not take the port, why not. The port is guarded
 * inside the listen callback, before this thread's event loop accepts a connection on it.
 */
export function listen(app: uWS.TemplatedApp, address: string, guard: GuardedListener): Promise<{ socket: uWS.us_listen_socket; port: number; unguarded: string | null }> {
  const { host, port } = splitAddress(address);
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (socket === false) {
        reject(new Error(`cannot listen on ${address}: address in use or not available`));
        return;
      }
      const bound = uWS.us_socket_local_port(socket as unknown as uWS.us_socket);
      resolve({ socket, port: bound, unguarded: guardPort(bound, guard) });
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
