/**
 * The relay's own metrics (beside the listener's request and SSE metrics it shares, actors/listener/metrics.ts):
 * how far each subject is copied, the resets it saw, and the memory its copies hold.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface RelayMetrics {
  readonly copiedSequence: Gauge<'instance'>;
  readonly resets: Counter<'instance' | 'reason'>;
  readonly cacheBytes: Gauge;
  /** Commit done at the node → this relay holding the change (publication, JetStream, the relay's read). */
  readonly commitToCopySeconds: Histogram;
}

export function createRelayMetrics(registry: Registry): RelayMetrics {
  const registers = [registry];
  return {
    copiedSequence: new Gauge({ name: 'chain_node_relay_copied_sequence', help: 'The last change sequence this relay has read from the JetStream stream, by instance', labelNames: ['instance'], registers }),
    resets: new Counter({ name: 'chain_node_relay_resets_total', help: 'Published feeds that started a new run (reason: epoch_changed, retention_gap), by instance', labelNames: ['instance', 'reason'], registers }),
    commitToCopySeconds: new Histogram({
      name: 'chain_node_relay_commit_to_copy_seconds',
      help: "From a change's commit at the node to this relay holding it (messages read live, with the publisher's Chain-Node-Committed-At)",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5], registers,
    }),
    cacheBytes: new Gauge({ name: 'chain_node_relay_cache_bytes', help: 'Bytes of decoded changes held in memory (bounded by relay.cache_bytes)', registers }),
  };
}
