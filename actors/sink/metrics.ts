/**
 * The sink's metrics (issue 32 point 4), served on its own `/metrics`: what it applied and skipped, its position
 * against the node's change head (lag), transaction times, commit-to-visible latency, bootstrap progress, resets and
 * reconnects — all labelled by processor id only (bounded cardinality).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface SinkMetrics {
  readonly changesApplied: Counter<'processor' | 'operation'>;
  /** Redelivered changes the tables already held (sequence at or below the stored cursor). */
  readonly changesSkipped: Counter<'processor'>;
  readonly transactions: Counter<'processor'>;
  readonly transactionSeconds: Histogram<'processor'>;
  /** The node's emittedAt of a change → the sink's COMMIT holding it returned. */
  readonly commitToVisibleSeconds: Histogram<'processor'>;
  readonly appliedSequence: Gauge<'processor'>;
  readonly headSequence: Gauge<'processor'>;
  readonly lagChanges: Gauge<'processor'>;
  readonly bootstrapRows: Counter<'processor' | 'collection'>;
  readonly bootstrapRowsExpected: Gauge<'processor' | 'collection'>;
  readonly bootstraps: Counter<'processor' | 'reason'>;
  readonly resets: Counter<'processor'>;
  readonly reconnects: Counter<'processor'>;
  /** 1 for the processor's current state (bootstrapping, following, retrying, stopped), 0 for the others. */
  readonly state: Gauge<'processor' | 'state'>;
}

export const SINK_STATES = ['bootstrapping', 'following', 'retrying', 'stopped'] as const;
export type SinkState = (typeof SINK_STATES)[number];

export function createSinkMetrics(registry: Registry): SinkMetrics {
  const registers = [registry];
  const seconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  return {
    changesApplied: new Counter({ name: 'chain_node_sink_changes_applied_total', help: 'Changes applied to PostgreSQL, by processor and operation', labelNames: ['processor', 'operation'], registers }),
    changesSkipped: new Counter({ name: 'chain_node_sink_changes_skipped_total', help: 'Redelivered changes the tables already held (at or below the stored cursor), by processor', labelNames: ['processor'], registers }),
    transactions: new Counter({ name: 'chain_node_sink_transactions_total', help: 'Committed page transactions (rows and cursor together), by processor', labelNames: ['processor'], registers }),
    transactionSeconds: new Histogram({ name: 'chain_node_sink_transaction_seconds', help: 'BEGIN to COMMIT of one page of changes, by processor', labelNames: ['processor'], buckets: seconds, registers }),
    commitToVisibleSeconds: new Histogram({ name: 'chain_node_sink_commit_to_visible_seconds', help: "From a change's emittedAt at the node to the sink's COMMIT holding it, by processor", labelNames: ['processor'], buckets: seconds, registers }),
    appliedSequence: new Gauge({ name: 'chain_node_sink_applied_sequence', help: 'The last change sequence the tables hold (the stored cursor), by processor', labelNames: ['processor'], registers }),
    headSequence: new Gauge({ name: 'chain_node_sink_head_sequence', help: "The node's change head the sink last read, by processor", labelNames: ['processor'], registers }),
    lagChanges: new Gauge({ name: 'chain_node_sink_lag_changes', help: "Changes between the node's change head and the stored cursor, by processor", labelNames: ['processor'], registers }),
    bootstrapRows: new Counter({ name: 'chain_node_sink_bootstrap_rows_total', help: 'Snapshot rows copied into PostgreSQL while bootstrapping, by processor and collection', labelNames: ['processor', 'collection'], registers }),
    bootstrapRowsExpected: new Gauge({ name: 'chain_node_sink_bootstrap_rows_expected', help: "Rows of the snapshot being copied (the node's rowCount), by processor and collection", labelNames: ['processor', 'collection'], registers }),
    bootstraps: new Counter({ name: 'chain_node_sink_bootstraps_total', help: 'Completed bootstraps (tables filled from a snapshot and swapped in), by processor and reason', labelNames: ['processor', 'reason'], registers }),
    resets: new Counter({ name: 'chain_node_sink_resets_total', help: 'reset_required answers or envelopes met while following, by processor', labelNames: ['processor'], registers }),
    reconnects: new Counter({ name: 'chain_node_sink_reconnects_total', help: 'New consumer sessions after a transient failure (node, network or PostgreSQL), by processor', labelNames: ['processor'], registers }),
    state: new Gauge({ name: 'chain_node_sink_state', help: 'The processor\'s sink state: 1 for the current one', labelNames: ['processor', 'state'], registers }),
  };
}

export function setState(metrics: SinkMetrics, processor: string, state: SinkState): void {
  for (const s of SINK_STATES) metrics.state.set({ processor, state: s }, s === state ? 1 : 0);
}
