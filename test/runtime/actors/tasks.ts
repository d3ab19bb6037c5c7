/** Pool tasks used by the runtime tests. */
import { movable } from '../../../runtime/pool.js';

export function square(n: number): number {
  return n * n;
}

/** The bytes reversed, handed back transferred (a fresh buffer the task owns). */
export function reverseBytes(input: { bytes: Uint8Array }): { reversed: Uint8Array; received: number } {
  const reversed = Uint8Array.from(input.bytes).reverse();
  return movable({ reversed, received: input.bytes.byteLength }, [reversed]);
}

/**
 * The pool thread's id, once `arrivals` tasks sharing `barrier` have started (each holds its thread
 * until then, so concurrent arrivals must be on different threads; gives up after a minute).
 */
export function threadId(input: { barrier: SharedArrayBuffer; arrivals: number }): Promise<number> {
  return import('node:worker_threads').then((wt) => {
    const cells = new Int32Array(input.barrier);
    Atomics.add(cells, 0, 1);
    Atomics.notify(cells, 0);
    const deadline = Date.now() + 60_000;
    for (let seen = Atomics.load(cells, 0); seen < input.arrivals && Date.now() < deadline; seen = Atomics.load(cells, 0)) Atomics.wait(cells, 0, seen, 100);
    return wt.threadId;
  });
}
