/**
 * Operational routes (spec §4.2), open without the API bearer: liveness (process up and store
 * readable), readiness (every required lane ready; lists each lane with its state and last error)
 * and Prometheus metrics.
 */
import type { Route } from './routes.js';

export interface LaneReport {
  readonly lane: string;
  readonly required: boolean;
  readonly state: string;
  readonly lastError: string | null;
  readonly lastErrorAt: string | null;
  readonly failedReason: string | null;
  readonly restarts: number;
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly lanes: readonly LaneReport[];
}

export interface OperationalDeps {
  /** Reads the store's identity in a read transaction; throws when the store is unreadable. */
  readonly storeIdentity: () => { readonly epoch: string; readonly schemaVersion: number };
  readonly readiness: () => Promise<ReadinessReport>;
  readonly metricsText: () => Promise<string>;
}

export function operationalRoutes(deps: OperationalDeps): Route[] {
  return [
    {
      method: 'get', pattern: '/health/live', open: true,
      handler: () => {
        try {
          const store = deps.storeIdentity();
          return { body: { status: 'live', store: { readable: true, epoch: store.epoch, schemaVersion: store.schemaVersion } } };
        } catch (error) {
          return { status: 503, body: { status: 'unhealthy', store: { readable: false, error: (error as Error).message } } };
        }
      },
    },
    {
      method: 'get', pattern: '/health/ready', open: true,
      handler: async () => {
        let report: ReadinessReport;
        try {
          report = await deps.readiness();
        } catch (error) {
          return { status: 503, body: { status: 'not_ready', reasons: [`the node's root did not answer: ${(error as Error).message}`], lanes: [] } };
        }
        const reasons = report.lanes.filter((lane) => lane.required && lane.state !== 'ready').map((lane) => `lane '${lane.lane}' is ${lane.state}${lane.failedReason ? `: ${lane.failedReason}` : lane.lastError ? `: ${lane.lastError}` : ''}`);
        return { status: report.ready ? 200 : 503, body: { status: report.ready ? 'ready' : 'not_ready', reasons, lanes: report.lanes } };
      },
    },
    {
      method: 'get', pattern: '/metrics', open: true,
      handler: async () => ({ body: await deps.metricsText(), contentType: 'text/plain; version=0.0.4; charset=utf-8' }),
    },
  ];
}
