/**
 * The relay's own metrics (beside the listener's request and SSE metrics it shares, actors/listener/metrics.ts):
 * how far each subject is copied, the resets it saw, and the memory its copies hold.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface RelayMetrics {
  readonly copiedSequence: Gauge<'instance'>;
  readonly resets: Counter<'instance' | 'reason'>;
  readonly cacheBytes: Gauge;
}

export function createRelayMetrics(registry: Registry): RelayMetrics {
  const registers = [registry];
  return {
    copiedSequence: new Gauge({ name: 'chain_node_relay_copied_sequence', help: 'The last change sequence this relay has read from the JetStream stream, by instance', labelNames: ['instance'], registers }),
    resets: new Counter({ name: 'chain_node_relay_resets_total', help: 'Published feeds that started a new run (reason: epoch_changed, retention_gap), by instance', labelNames: ['instance', 'reason'], registers }),
    cacheBytes: new Gauge({ name: 'chain_node_relay_cache_bytes', help: 'Bytes of decoded changes held in memory (bounded by relay.cache_bytes)', registers }),
  };
}
