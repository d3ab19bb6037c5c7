/**
 * The lanes the node runs, built from the configuration. Adding a lane is one actor file in
 * actors/ plus its `[actors.<lane>]` section and an entry here.
 */
import { fileURLToPath } from 'node:url';
import type { ChildSpec, LaneSpec, RestartPolicy } from '../../runtime/supervisor.js';
import type { ActorBudget, NodeConfig } from './config-schema.js';
import type { ListenerArgs } from '../listener.js';

const actorModule = (file: string): string => fileURLToPath(new URL(`../${file}`, import.meta.url));

export function restartPolicy(budget: ActorBudget): RestartPolicy {
  return {
    strategy: 'one_for_one',
    intensity: budget.restart_intensity,
    periodMs: budget.restart_period_seconds * 1000,
    backoffInitialMs: budget.backoff_initial_ms,
    backoffMaxMs: budget.backoff_max_ms,
    jitter: budget.backoff_jitter,
  };
}

function children(lane: string, file: string, budget: ActorBudget, shutdownMs: number, args: (index: number) => unknown): ChildSpec[] {
  return Array.from({ length: budget.instances }, (_, index) => ({
    name: budget.instances === 1 ? lane : `${lane}#${index + 1}`,
    module: actorModule(file),
    args: args(index),
    restart: 'permanent' as const,
    mailboxCapacity: budget.mailbox_capacity,
    memoryMb: budget.memory_mb,
    shutdownMs,
  }));
}

export function buildLanes(config: NodeConfig, dataDir: string): LaneSpec[] {
  const shutdownMs = config.runtime.shutdown_timeout_seconds * 1000;
  const listenerArgs: ListenerArgs = {
    address: config.listeners.api,
    dataDir,
    maxBodyBytes: config.limits.max_request_body_bytes,
    maxUrlBytes: config.limits.max_url_bytes,
    drainMs: Math.floor(shutdownMs / 2),
  };
  return [
    { lane: 'listener', required: true, policy: restartPolicy(config.actors.listener), children: children('listener', 'listener.js', config.actors.listener, shutdownMs, () => listenerArgs) },
  ];
}

/** Stop order: listeners stop accepting first, writers finish their transactions after. */
export const STOP_ORDER = ['listener'];
