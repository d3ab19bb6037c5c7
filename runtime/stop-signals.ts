/**
 * SIGINT/SIGTERM handling shared by the node, the sink and the relay: the first signal starts a graceful stop, a
 * second one gives it up. The same signal again within `DUPLICATE_WINDOW_MS` of the first is the same request
 * delivered twice, not a second one: Ctrl-C on `npm start` reaches the process from the terminal (the whole
 * foreground process group) and again from npm, which forwards the signals it gets to its script a few milliseconds
 * later. A different signal, or the same one later, is a second request.
 */
import type { Logger } from './log.js';

export const DUPLICATE_WINDOW_MS = 500;

export interface StopSignalHandlers {
  readonly log: Logger;
  /** Starts the graceful stop. */
  readonly first: (signal: NodeJS.Signals) => void;
  /** Gives the graceful stop up (called at most once). */
  readonly second: (signal: NodeJS.Signals) => void;
  /** The clock (tests). */
  readonly now?: () => number;
}

/** The handler of SIGINT and SIGTERM (without installing it): exported for tests. */
export function stopSignalHandler(handlers: StopSignalHandlers): (signal: NodeJS.Signals) => void {
  const now = handlers.now ?? (() => performance.now());
  let first: { signal: NodeJS.Signals; at: number } | null = null;
  let gaveUp = false;
  return (signal) => {
    if (first === null) {
      first = { signal, at: now() };
      handlers.first(signal);
      return;
    }
    if (gaveUp) return;
    const elapsedMs = now() - first.at;
    if (signal === first.signal && elapsedMs < DUPLICATE_WINDOW_MS) {
      handlers.log.info('the same signal again at once (npm forwards the one the terminal sent): one stop request', { signal, elapsedMs: Math.round(elapsedMs) });
      return;
    }
    gaveUp = true;
    handlers.second(signal);
  };
}

/** Installs the handler for SIGINT and SIGTERM. */
export function onStopSignals(handlers: StopSignalHandlers): void {
  const handler = stopSignalHandler(handlers);
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
