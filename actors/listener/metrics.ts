/**
 * The listener lane's metrics, declared in one place (one set per listener worker; the root sums them): per-route
 * requests, the request boundary's faults, and the SSE hub's streams and timings. The API server and the SSE hub
 * update them through the shapes they declare (api/server.ts ApiServerMetrics, api/sse/sse-hub.ts SseHubMetrics).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { RouteMetrics } from '../../api/route-metrics.js';
import type { ApiServerMetrics } from '../../api/server.js';
import type { SseHubMetrics } from '../../api/sse/sse-hub.js';
import { REQUEST_FAULTS_COUNTER } from '../../api/request-faults.js';

export interface ListenerMetrics extends ApiServerMetrics {
  readonly sse: SseHubMetrics;
}

/** Buckets of the SSE timings: a millisecond up to a few seconds. */
const SSE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5];

export function createListenerMetrics(registry: Registry): ListenerMetrics {
  const registers = [registry];
  const buckets = SSE_BUCKETS;
  return {
    routes: new RouteMetrics(
      registry,
      { name: 'chain_node_http_requests_total', help: 'HTTP requests answered, by route pattern and status' },
      { name: 'chain_node_http_request_duration_seconds', help: 'Time from request to response, by route pattern' },
    ),
    // The rpc lane counts its own listeners' faults under the same name (actors/rpc/metrics.ts).
    requestFaults: new Counter({ ...REQUEST_FAULTS_COUNTER, labelNames: [...REQUEST_FAULTS_COUNTER.labelNames], registers }),
    sse: {
      sweepSeconds: new Histogram({ name: 'chain_node_sse_sweep_seconds', help: 'One fan-out pass: reading the new changes and writing them to every stream that can take them', buckets, registers }),
      events: new Counter({ name: 'chain_node_sse_events_total', help: 'Stream-change pairs handed to SSE streams (a batch of changes written at once counts once)', registers }),
      commitToWriteSeconds: new Histogram({
        name: 'chain_node_sse_commit_to_write_seconds',
        help: "From a change's commit completing to an SSE stream being handed its frame (every 16th stream of a fan-out pass and the last one, for changes committed while this listener was notified)",
        buckets, registers,
      }),
      noticeDelaySeconds: new Histogram({ name: 'chain_node_sse_notice_delay_seconds', help: "From a processor's commit completing to this listener handling its change notice", buckets, registers }),
      streams: new Gauge({ name: 'chain_node_sse_streams', help: 'Open SSE change streams', registers }),
      stalledStreams: new Gauge({ name: 'chain_node_sse_streams_stalled', help: 'Open SSE streams whose client is not taking what was written (closed as slow consumers after two heartbeat intervals)', registers }),
      streamsEnded: new Counter({ name: 'chain_node_sse_streams_ended_total', help: 'SSE change streams ended, by how', labelNames: ['how'], registers }),
    },
  };
}
