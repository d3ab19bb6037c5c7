/** The publisher lane's metrics, declared in one place: publication lag per instance (changes and seconds), publish errors by reason and published resets. */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface PublisherMetrics {
  /** Changes committed to the instance's log and not yet acknowledged by JetStream. */
  readonly lagChanges: Gauge<'instance'>;
  /** Age of the oldest committed, unpublished change this process was notified of (0 when none is waiting). */
  readonly lagSeconds: Gauge<'instance'>;
  /** Last change sequence JetStream acknowledged. */
  readonly publishedSequence: Gauge<'instance'>;
  /** Reasons: connection, timeout, fence (wrong last subject sequence), foreign_publisher (another store owns the subject), retention_gap, other. */
  readonly publishErrors: Counter<'instance' | 'reason'>;
  /** Reset markers published (docs/jetstream.md "Resets"), by reason: epoch_changed, retention_gap. */
  readonly resets: Counter<'instance' | 'reason'>;
}

export const PUBLISH_ERROR_REASONS = ['connection', 'timeout', 'fence', 'foreign_publisher', 'retention_gap', 'other'] as const;
export const RESET_REASONS = ['epoch_changed', 'retention_gap'] as const;

/** Every counter series of `instance` at 0, so the first error or reset is an increase (alerts use increase()). */
export function zeroSeries(metrics: PublisherMetrics, instance: string): void {
  for (const reason of PUBLISH_ERROR_REASONS) metrics.publishErrors.inc({ instance, reason }, 0);
  for (const reason of RESET_REASONS) metrics.resets.inc({ instance, reason }, 0);
}

export function createPublisherMetrics(registry: Registry): PublisherMetrics {
  const registers = [registry];
  return {
    lagChanges: new Gauge({ name: 'chain_node_jetstream_publication_lag_changes', help: 'Committed changes not yet acknowledged by JetStream, by instance', labelNames: ['instance'], registers }),
    lagSeconds: new Gauge({ name: 'chain_node_jetstream_publication_lag_seconds', help: 'Age of the oldest committed change not yet acknowledged by JetStream, by instance', labelNames: ['instance'], registers }),
    publishedSequence: new Gauge({ name: 'chain_node_jetstream_published_sequence', help: 'Last change sequence JetStream acknowledged, by instance', labelNames: ['instance'], registers }),
    publishErrors: new Counter({ name: 'chain_node_jetstream_publish_errors_total', help: 'JetStream publish and connection errors, by instance and reason', labelNames: ['instance', 'reason'], registers }),
    resets: new Counter({ name: 'chain_node_jetstream_resets_total', help: 'Reset markers published to JetStream, by instance and reason (epoch_changed, retention_gap)', labelNames: ['instance', 'reason'], registers }),
  };
}
