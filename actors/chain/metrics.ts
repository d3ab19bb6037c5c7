/** The chain lane's metrics, declared in one place: whether (and why) the lane stopped publishing journal moves. */
import { Gauge, type Registry } from 'prom-client';

export interface ChainMetrics {
  /** `chain_node_chain_failed_closed{cause}`: 1 once publication stopped (ops/alerts.yml pages on it). */
  readonly failedClosed: Gauge<'cause'>;
}

export function createChainMetrics(registry: Registry): ChainMetrics {
  const registers = [registry];
  return {
    failedClosed: new Gauge({ name: 'chain_node_chain_failed_closed', help: 'Set to 1 when the chain lane stopped publication (a finality contradiction or a reorg deeper than chain.max_reorg_depth), by cause', labelNames: ['cause'], registers }),
  };
}
