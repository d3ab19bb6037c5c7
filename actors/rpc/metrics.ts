/**
 * The rpc lane's metrics, declared in one place (one set per rpc worker; the root sums them): JSON-RPC bodies
 * answered, the WebSocket listener's connections, notifications and refusals, and the request boundary's faults.
 * The JSON-RPC servers update them through the shape they declare (api/rpc/rpc-server.ts RpcServerMetrics).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RpcServerMetrics } from '../../api/rpc/rpc-server.js';
import { REQUEST_FAULTS_COUNTER } from '../../api/request-faults.js';

export type RpcMetrics = RpcServerMetrics;

export function createRpcMetrics(registry: Registry): RpcMetrics {
  const registers = [registry];
  return {
    requests: new Counter({ name: 'chain_node_rpc_requests_total', help: 'JSON-RPC bodies answered, by transport', labelNames: ['transport'], registers }),
    lagging: new Counter({ name: 'chain_node_rpc_ws_lagging_closed_total', help: 'WebSocket clients closed with 1013 for falling behind their event channel', registers }),
    refusedFrames: new Counter({ name: 'chain_node_rpc_ws_refused_frames_total', help: 'WebSocket frames refused by closing the connection, by close code (1007 not UTF-8, 1009 too big)', labelNames: ['code'], registers }),
    notifications: new Counter({ name: 'chain_node_rpc_ws_notifications_total', help: 'Subscription notifications written to WebSocket clients', registers }),
    connections: new Gauge({ name: 'chain_node_rpc_ws_connections', help: 'Open JSON-RPC WebSocket connections', registers }),
    // The listener lane counts the API listener's faults under the same name (actors/listener/metrics.ts).
    requestFaults: new Counter({ ...REQUEST_FAULTS_COUNTER, labelNames: [...REQUEST_FAULTS_COUNTER.labelNames], registers }),
  };
}
