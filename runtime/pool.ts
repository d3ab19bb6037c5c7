import { Piscina } from 'piscina';

/**
 * The node's pool for CPU-heavy pure work (RLP decode, trie roots, sender recovery, map over a batch
 * of blocks). Tasks are named functions exported by one task module; the pool size is a budget.
 */
export interface TaskPool {
  run<Result = unknown>(task: string, input: unknown): Promise<Result>;
  readonly threads: number;
  destroy(): Promise<void>;
}

export interface TaskPoolOptions {
  /** Absolute path or file URL of a module whose named exports are the tasks. */
  readonly module: string;
  readonly threads: number;
  readonly memoryMb?: number;
}

export function createTaskPool(options: TaskPoolOptions): TaskPool {
  const piscina = new Piscina({
    filename: options.module,
    minThreads: options.threads,
    maxThreads: options.threads,
    idleTimeout: 60_000,
    ...(options.memoryMb ? { resourceLimits: { maxOldGenerationSizeMb: options.memoryMb } } : {}),
  });
  return {
    threads: options.threads,
    run: (task, input) => piscina.run(input, { name: task }),
    destroy: () => piscina.destroy(),
  };
}
