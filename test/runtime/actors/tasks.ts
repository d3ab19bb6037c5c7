/** Pool tasks used by the runtime tests. */
export function square(n: number): number {
  return n * n;
}

export function threadId(): Promise<number> {
  return import('node:worker_threads').then((wt) => {
    const end = Date.now() + 50;
    while (Date.now() < end);
    return wt.threadId;
  });
}
