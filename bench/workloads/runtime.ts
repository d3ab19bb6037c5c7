/**
 * Workload `runtime`: the actor runtime's own costs, which later end-to-end workloads compare
 * against — one-way throughput of small control messages between two actors (batched and
 * unbatched), ask round-trip latency between two workers, and actor restart time.
 */
import { fileURLToPath } from 'node:url';
import { ActorSystem } from '../../runtime/system.js';
import { createLogger } from '../../runtime/log.js';
import type { LaneSpec } from '../../runtime/supervisor.js';
import { percentile, summarize } from '../stats.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';
import type { AnyMessage } from '../../runtime/protocol.js';

const actor = (name: string) => fileURLToPath(new URL(`../actors/${name}.js`, import.meta.url));

function lanes(mailboxCapacity: number): LaneSpec[] {
  const policy = { strategy: 'one_for_one' as const, intensity: 1000, periodMs: 60_000, backoffInitialMs: 1, backoffMaxMs: 1, jitter: 0 };
  const child = (name: string, module: string) => ({ name, module: actor(module), restart: 'permanent' as const, mailboxCapacity, memoryMb: 256, shutdownMs: 2000 });
  return [
    { lane: 'sink', required: true, policy, children: [child('sink', 'sink')] },
    { lane: 'driver', required: true, policy, children: [child('driver', 'driver')] },
  ];
}

async function withSystem<T>(batching: boolean, mailboxCapacity: number, run: (system: ActorSystem) => Promise<T>): Promise<T> {
  const log = createLogger({ lane: 'bench', level: 'silent', maxLinesPerSecond: 10 });
  const system = new ActorSystem({ log, logLevel: 'silent', logRate: 10, batching });
  for (const lane of lanes(mailboxCapacity)) system.startLane(lane);
  try {
    await system.ask('sink', { type: 'echo', value: 0 });
    await system.ask('driver', { type: 'round-trips', to: 'sink', count: 1 });
    return await run(system);
  } finally {
    await system.stop();
  }
}

async function throughput(batching: boolean, options: WorkloadOptions): Promise<number[]> {
  const count = options.smoke ? 20_000 : Math.round(400_000 * options.durationSeconds / 5);
  return withSystem(batching, options.mailboxCapacity, async (system) => {
    const rates: number[] = [];
    for (let round = 0; round < options.rounds; round += 1) {
      const total = count * (round + 1);
      const { seconds } = await system.ask<AnyMessage, { seconds: number }>('driver', { type: 'flood', to: 'sink', count }, 600_000);
      await system.ask('sink', { type: 'await-count', total });
      rates.push(count / seconds);
    }
    return rates;
  });
}

async function roundTrips(options: WorkloadOptions): Promise<number[]> {
  const count = options.smoke ? 2_000 : Math.round(40_000 * options.durationSeconds / 5);
  return withSystem(true, options.mailboxCapacity, async (system) => {
    const all: number[] = [];
    for (let round = 0; round < options.rounds; round += 1) all.push(...await system.ask<AnyMessage, number[]>('driver', { type: 'round-trips', to: 'sink', count }, 600_000));
    return all.sort((a, b) => a - b);
  });
}

async function restartTimes(options: WorkloadOptions): Promise<number[]> {
  const restarts = options.smoke ? 3 : 10 * options.rounds;
  return withSystem(true, options.mailboxCapacity, async (system) => {
    const times: number[] = [];
    for (let i = 0; i < restarts; i += 1) {
      const started = performance.now();
      await system.kill('sink');
      await system.ask('sink', { type: 'echo', value: i }, 10_000);
      times.push(performance.now() - started);
    }
    return times;
  });
}

export const runtimeWorkload: Workload = {
  name: 'runtime',
  description: 'actor runtime costs: mailbox throughput (batched/unbatched), ask round trip, restart time',
  async run(options) {
    const batched = summarize(await throughput(true, options));
    const unbatched = summarize(await throughput(false, options));
    const latencies = await roundTrips(options);
    const restart = summarize(await restartTimes(options));
    const figures: Figure[] = [
      { name: 'mailbox one-way, batched', unit: 'msg/s', ...batched },
      { name: 'mailbox one-way, unbatched', unit: 'msg/s', ...unbatched },
      { name: 'batching speed-up', unit: 'ratio', min: batched.min / unbatched.max, median: batched.median / unbatched.median, max: batched.max / unbatched.min },
      { name: 'ask round trip p50', unit: 'µs', ...single(percentile(latencies, 50)) },
      { name: 'ask round trip p99', unit: 'µs', ...single(percentile(latencies, 99)) },
      { name: 'restart (crash → serving)', unit: 'ms', ...restart },
    ];
    return figures;
  },
};

function single(value: number): { min: number; median: number; max: number } {
  return { min: value, median: value, max: value };
}
