/**
 * Starts the real listener actor in an ActorSystem over a temp store, with a root that answers its
 * readiness and metrics asks, and stops everything after the test.
 */
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ListenerArgs } from '../../../actors/listener/actor.js';
import type { ConfiguredProcessor } from '../../../api/aggregate/configured-processors.js';
import { createRootMetrics } from '../../../actors/node/metrics.js';
import { builtinKind, kindInfo } from '../../../actors/kinds/registry.js';
import type { ActorSystem } from '../../../runtime/system.js';
import { lane, newSystem } from '../../runtime/helpers.js';
import { CHAIN_ID, closeTempStore, createTempStore, type TempStore } from './store-fixture.js';

const LISTENER_MODULE = fileURLToPath(new URL('../../../actors/listener/actor.js', import.meta.url));

export const BLOBS: ConfiguredProcessor = { id: 'blobs', kind: 'blobs', instance: 'blobs@1', output: 'entities', delivery: true, startBlock: null, info: kindInfo(builtinKind('blobs')) };

export interface RunningListener {
  readonly base: string;
  readonly port: number;
  readonly system: ActorSystem;
  readonly temp: TempStore;
  /** Tells the listener that `processor`'s change log grew (what the processor lane sends). */
  notify(processor: string, sequence: bigint): Promise<void>;
  /** The listener's Prometheus text. */
  metrics(): Promise<string>;
}

export type ListenerOverrides = Partial<Omit<ListenerArgs, 'address' | 'dataDir'>>;

/** A temp store (seeded by `seed` before the listener opens it) and a listener serving it. */
export async function startListener(t: TestContext, seed: (temp: TempStore) => Promise<void>, overrides: ListenerOverrides = {}): Promise<RunningListener> {
  const temp = createTempStore();
  const system = newSystem();
  t.after(async () => {
    await system.stop();
    await closeTempStore(temp);
  });
  await seed(temp);
  const rootMetrics = createRootMetrics(system, () => true);
  let announced!: (port: number) => void;
  const listening = new Promise<number>((resolve) => (announced = resolve));
  system.handleRoot((message) => {
    if (message.type === 'listening') announced(message.port as number);
    if (message.type === 'readiness') return { ready: true, lanes: [] };
    if (message.type === 'metrics') return rootMetrics.text();
    return undefined;
  });
  const args: ListenerArgs = {
    address: '127.0.0.1:0', dataDir: temp.dataDir, maxBodyBytes: 65_536, maxUrlBytes: 8192, drainMs: 200,
    chainId: CHAIN_ID, network: 'devnet', processors: [BLOBS],
    defaultPageLimit: 10, maxPageLimit: 50, maxBlockRange: 100,
    sse: { heartbeatSeconds: 30, maxBufferedBytes: 4 * 1024 * 1024, batchChanges: 64 },
    rpcHttp: '127.0.0.1:8545', rpcWs: '127.0.0.1:8546',
    ...overrides,
  };
  system.startLane(lane('listener', [{ name: 'listener', module: LISTENER_MODULE, args, restart: 'permanent', mailboxCapacity: 64, memoryMb: 256, shutdownMs: 5000 }]));
  const port = await listening;
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    system,
    temp,
    notify: (processor, sequence) => system.send('listener', { type: 'changes', processor, sequence: Number(sequence), committedAt: performance.timeOrigin + performance.now() }),
    metrics: async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
  };
}

export interface ErrorShape {
  readonly error: { readonly code: string; readonly message: string; readonly retryable: boolean; readonly details?: Record<string, unknown>; readonly requestId: string };
}

/** Fetches `path` and returns status and parsed JSON. */
export async function getJson<T = unknown>(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: T; text: string }> {
  const response = await fetch(`${base}${path}`, { headers });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as T, text };
}
