/** Small helpers of the NAT tests: a logger and metrics that record what the port mapper reports, and a deadline poll. */
import type { Logger } from '../../runtime/log.js';
import type { NatStage } from '../../net/p2p/nat/port-mapper.js';

export function recordingLogger(lines: string[] = []): Logger {
  const logger: Logger = {
    debug: (message) => lines.push(`debug ${message}`), info: (message) => lines.push(`info ${message}`),
    warn: (message, fields) => lines.push(`warn ${message} ${JSON.stringify(fields ?? {})}`), error: (message) => lines.push(`error ${message}`), child: () => logger,
  };
  return logger;
}

export function recordingMetrics() {
  const seen = { mapped: [] as number[], failures: [] as NatStage[], renewals: 0 };
  return { seen, metrics: { mapped: { set: (v: number) => seen.mapped.push(v) }, failures: { inc: ({ stage }: { stage: NatStage }) => seen.failures.push(stage) }, renewals: { inc: () => { seen.renewals++; } } } };
}

export async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

