/**
 * `Promise.withResolvers` (ES2024) for Node 20: libp2p 2.9's peer store locks through mortice 3.3 → it-queue, which
 * calls it; Node 20 does not have it (Node 22 does). Installed once, before any libp2p code runs, with the standard's
 * semantics; a runtime that has it keeps its own.
 */
interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const PromiseWith = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };
if (typeof PromiseWith.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(this: PromiseConstructor): Resolvers<T> {
      let resolve!: Resolvers<T>['resolve'];
      let reject!: Resolvers<T>['reject'];
      const promise = new this<T>((res, rej) => { resolve = res; reject = rej; });
      return { promise, resolve, reject };
    },
  });
}

export {};
