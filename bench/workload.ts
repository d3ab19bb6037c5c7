/**
 * What every bench workload implements, and the figures it reports. Register a workload in
 * `bench/workloads/index.ts`; the CLI, the result file, the table and the HTML report take it from there.
 */
import type { NodeConfig } from '../actors/node/config-schema.js';

export interface WorkloadOptions {
  readonly durationSeconds: number;
  readonly rounds: number;
  readonly smoke: boolean;
  /** Mailbox capacity of the runtime workload's actors (`actors.chain.mailbox_capacity` of the effective config). */
  readonly mailboxCapacity: number;
  /** Concurrent connections (query) or streams (sse) of the load generator; 50 when absent. */
  readonly connections?: number;
  /**
   * The effective node configuration of this run (`--config` file, then `--set` overrides), validated by the
   * node's schema. Nodes started with `startBenchNode` get the same file and overrides; in-process workloads
   * read their knobs (pool threads, mailbox capacity, batch sizes) from here. Absent when a test calls a
   * workload directly: the schema's defaults apply.
   */
  readonly config?: NodeConfig;
}

export interface Summary {
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

export interface Figure extends Summary {
  readonly name: string;
  readonly unit: string;
  /** Which way is better; absent: neither (a count, a setting, a machine figure). */
  readonly better?: 'higher' | 'lower';
  /**
   * The same figure measured on a baseline in the same run (e.g. a naive `node:http` server on the same
   * LMDB), round by round beside this one.
   */
  readonly baseline?: Summary & { readonly name: string };
  /** This figure divided by the baseline's, per round, then summarized: > 1 means this one is larger. */
  readonly ratio?: Summary;
}

export interface Workload {
  readonly name: string;
  readonly description: string;
  run(options: WorkloadOptions): Promise<Figure[]>;
}
