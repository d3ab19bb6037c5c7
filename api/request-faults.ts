/**
 * The request boundary of every listener: an exception while handling one client's request is the
 * node's fault, never the lane's. It is logged once under the request id the answer carries (the
 * logger bounds its rate), counted in `chain_node_request_faults_total{listener}`, and answered
 * (500 `internal` / JSON-RPC -32603) or, when nothing can be answered any more, ends that client's
 * connection. It never escapes into uWS's callback, where it would crash the worker and spend the
 * lane's restart intensity on traffic anyone can send.
 */
import type { Counter } from 'prom-client';
import type { Logger } from '../runtime/log.js';
import { errorFields } from '../runtime/log.js';

export type ListenerName = 'api' | 'rpc_http' | 'rpc_ws';

export interface RequestFaults {
  /** Records a fault of one request; returns the request id it was logged under. */
  record(listener: ListenerName, requestId: string, error: unknown, fields?: Readonly<Record<string, unknown>>): string;
}

/** What the boundary counts; the lane running the listener declares it (actors/listener/metrics.ts, actors/rpc/metrics.ts). */
/** The counter's name, help and labels: the listener and rpc lanes each create it in their own worker (summed by name). */
export const REQUEST_FAULTS_COUNTER = {
  name: 'chain_node_request_faults_total',
  help: 'Requests whose handling threw inside the node (answered 500 / -32603 or their connection ended), by listener',
  labelNames: ['listener'] as const,
};

export interface RequestFaultsMetrics {
  /** `chain_node_request_faults_total{listener}`. */
  readonly requestFaults: Counter<'listener'>;
}

export function requestFaults(metrics: RequestFaultsMetrics, log: Logger): RequestFaults {
  const faults = metrics.requestFaults;
  return {
    record(listener, requestId, error, fields = {}) {
      faults.inc({ listener });
      log.error('request failed inside the node', { listener, requestId, ...fields, ...errorFields(error) });
      return requestId;
    },
  };
}
