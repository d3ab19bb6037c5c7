import { Piscina } from 'piscina';
import { buffersOf } from './transfer.js';

/**
 * The node's pool for CPU-heavy pure work (RLP decode, trie roots, sender recovery, map over a batch
 * of blocks). Tasks are named functions exported by one task module; the pool size is a budget.
 */
export interface TaskPool {
  /** `transfer`: buffers of `input` handed to the pool thread instead of copied (runtime/transfer.ts). */
  run<Result = unknown>(task: string, input: unknown, transfer?: readonly ArrayBuffer[]): Promise<Result>;
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
    run: (task, input, transfer) => piscina.run(input, { name: task, ...(transfer && transfer.length > 0 ? { transferList: transfer as ArrayBuffer[] } : {}) }),
    destroy: () => piscina.destroy(),
  };
}

/**
 * A task's result whose views' buffers go back to the caller's thread transferred, not copied (piscina's movable
 * protocol); the task module returns `movable(result, [result.bytes])`. The buffers must not be used after.
 */
export function movable<Value>(value: Value, views: readonly ArrayBufferView[]): Value {
  const buffers = buffersOf(views);
  const transferable = {
    get [Piscina.transferableSymbol]() { return buffers; },
    get [Piscina.valueSymbol]() { return value; },
  };
  return Piscina.move(transferable as never) as unknown as Value;
}
