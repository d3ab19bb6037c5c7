/**
 * A counting semaphore: at most `size` tasks run at once, the others wait in arrival order. A history source's
 * request slots (spec §4.7: on-demand JSON-RPC history shares the source-concurrency ceiling with jobs).
 */
export interface Slots {
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Tasks running and waiting right now. */
  readonly busy: number;
  readonly waiting: number;
}

export function createSlots(size: number): Slots {
  let busy = 0;
  const queue: Array<() => void> = [];
  const release = () => {
    const next = queue.shift();
    if (next) next();
    else busy -= 1;
  };
  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (busy < size) busy += 1;
      else await new Promise<void>((resolve) => queue.push(resolve));
      try {
        return await task();
      } finally {
        release();
      }
    },
    get busy() { return busy; },
    get waiting() { return queue.length; },
  };
}
