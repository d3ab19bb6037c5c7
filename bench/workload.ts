/** What every bench workload implements, and the figures it reports. */
export interface WorkloadOptions {
  readonly durationSeconds: number;
  readonly rounds: number;
  readonly smoke: boolean;
  readonly mailboxCapacity: number;
  /** Concurrent connections (query) or streams (sse) of the load generator; 50 when absent. */
  readonly connections?: number;
}

export interface Figure {
  readonly name: string;
  readonly unit: string;
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

export interface Workload {
  readonly name: string;
  readonly description: string;
  run(options: WorkloadOptions): Promise<Figure[]>;
}
