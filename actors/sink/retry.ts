/** Retries a call to the node through transient failures with the client's backoff (spec §4.8 policy), a bounded number of times. */
import { backoffDelay, DEFAULT_BACKOFF, isTransient, type BackoffPolicy } from '../../api/client/index.js';

export interface RetryOptions {
  readonly attempts: number;
  readonly signal?: AbortSignal;
  readonly backoff?: Partial<BackoffPolicy>;
  readonly onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

export async function retryTransient<T>(call: () => Promise<T>, options: RetryOptions): Promise<T> {
  const policy = { ...DEFAULT_BACKOFF, ...options.backoff };
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= options.attempts || options.signal?.aborted || !isTransient(error)) throw error;
      const delayMs = backoffDelay(policy, attempt, Math.random);
      options.onRetry?.({ attempt, delayMs, reason: error instanceof Error ? error.message : String(error) });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}
