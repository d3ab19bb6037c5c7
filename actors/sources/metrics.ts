/** The source lane's metrics when it follows an upstream JSON-RPC node (rpc.ts), declared in one place. */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface RpcSourceMetrics {
  readonly head: Gauge;
  readonly recorded: Counter;
  readonly reorgs: Counter;
  /** Labelled by the error's class name. */
  readonly failures: Counter<'error'>;
}

export function createRpcSourceMetrics(registry: Registry): RpcSourceMetrics {
  const registers = [registry];
  return {
    head: new Gauge({ name: 'chain_node_rpc_source_head_number', help: 'Number of the upstream head block this source followed last', registers }),
    recorded: new Counter({ name: 'chain_node_rpc_source_blocks_recorded_total', help: 'Verified blocks recorded from the upstream', registers }),
    reorgs: new Counter({ name: 'chain_node_rpc_source_reorgs_total', help: 'Times the upstream head moved to a branch that does not extend the previous head', registers }),
    failures: new Counter({ name: 'chain_node_rpc_source_failures_total', help: 'Failed polls of the upstream, by error class', labelNames: ['error'], registers }),
  };
}
