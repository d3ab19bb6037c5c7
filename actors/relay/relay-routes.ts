/**
 * The relay's operational routes, open without the API bearer like the node's (spec §4.2): liveness (the process
 * answers; a relay has no store), readiness (connected to NATS, the node's descriptors read, every published
 * subject read up to where it stood when the relay started) and Prometheus metrics.
 */
import type { Route } from '../../api/routes.js';

export interface RelayReadiness {
  readonly ready: boolean;
  readonly reasons: readonly string[];
  readonly processors: ReadonlyArray<{ readonly id: string; readonly instance: string; readonly subject: string; readonly caughtUp: boolean; readonly head: string }>;
}

export interface RelayOperationalDeps {
  readonly readiness: () => RelayReadiness;
  readonly metricsText: () => Promise<string>;
}

export function relayOperationalRoutes(deps: RelayOperationalDeps): Route[] {
  return [
    { method: 'get', pattern: '/health/live', open: true, handler: () => ({ body: { status: 'live', role: 'relay' } }) },
    {
      method: 'get', pattern: '/health/ready', open: true,
      handler: () => {
        const report = deps.readiness();
        return { status: report.ready ? 200 : 503, body: { status: report.ready ? 'ready' : 'not_ready', role: 'relay', reasons: report.reasons, processors: report.processors } };
      },
    },
    {
      method: 'get', pattern: '/metrics', open: true,
      handler: async () => ({ body: await deps.metricsText(), contentType: 'text/plain; version=0.0.4; charset=utf-8' }),
    },
  ];
}
