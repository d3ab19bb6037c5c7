import { fileURLToPath } from 'node:url';
import { ActorSystem } from '../../runtime/system.js';
import { createLogger } from '../../runtime/log.js';
import type { ChildSpec, LaneSpec, RestartPolicy } from '../../runtime/supervisor.js';
import type { TaskPool } from '../../runtime/pool.js';

export const actorModule = (name: string): string => fileURLToPath(new URL(`./actors/${name}.js`, import.meta.url));

export const quietPolicy: RestartPolicy = {
  strategy: 'one_for_one', intensity: 5, periodMs: 10_000, backoffInitialMs: 20, backoffMaxMs: 1000, jitter: 0,
};

export function child(name: string, module: string, overrides: Partial<ChildSpec> = {}): ChildSpec {
  return { name, module: actorModule(module), restart: 'permanent', mailboxCapacity: 64, memoryMb: 64, shutdownMs: 2000, ...overrides };
}

export function lane(name: string, children: ChildSpec[], policy: Partial<RestartPolicy> = {}): LaneSpec {
  return { lane: name, required: true, policy: { ...quietPolicy, ...policy }, children };
}

export function newSystem(options: { batching?: boolean; pool?: TaskPool } = {}): ActorSystem {
  const log = createLogger({ lane: 'node', level: 'silent', maxLinesPerSecond: 100 });
  return new ActorSystem({ log, logLevel: 'silent', logRate: 100, ...options });
}

export async function waitFor(predicate: () => boolean, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
