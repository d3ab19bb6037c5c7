/** The outbox lane's metrics, declared in one place: the consumer-record operations it handled and the changes its retention pruned. */
import { Counter, type Registry } from 'prom-client';

export interface OutboxMetrics {
  /** Labelled by the message type (`consumer.create`, `consumer.ack`, …). */
  readonly consumerCalls: Counter<'operation'>;
  readonly changesPruned: Counter<'instance'>;
  /** Retention passes over every change log (one per `[retention] prune_interval_seconds`), pruning or not. */
  readonly prunePasses: Counter;
}

export function createOutboxMetrics(registry: Registry): OutboxMetrics {
  const registers = [registry];
  return {
    consumerCalls: new Counter({ name: 'chain_node_outbox_consumer_calls_total', help: 'Consumer record operations handled by the outbox, by operation', labelNames: ['operation'], registers }),
    changesPruned: new Counter({ name: 'chain_node_change_log_pruned_total', help: 'Changes removed from the change log by its retention window', labelNames: ['instance'], registers }),
    prunePasses: new Counter({ name: 'chain_node_change_log_prune_passes_total', help: 'Retention passes over the change logs, whether or not they pruned anything', registers }),
  };
}
