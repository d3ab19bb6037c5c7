/** A processor lane's metrics, declared in one place: journal moves applied and how long each commit took. */
import { Counter, Histogram, type Registry } from 'prom-client';

export interface ProcessorMetrics {
  readonly journalMoves: Counter;
  /** One commit of a batch of moves (commit.ts). */
  readonly commitSeconds: Histogram;
}

export function createProcessorMetrics(registry: Registry): ProcessorMetrics {
  const registers = [registry];
  return {
    journalMoves: new Counter({ name: 'chain_node_processor_journal_moves_total', help: 'Chain journal moves applied', registers }),
    commitSeconds: new Histogram({ name: 'chain_node_processor_commit_seconds', help: 'Time of one processor commit (a batch of moves)', buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1], registers }),
  };
}
