/**
 * The root actor's inbox (`node`, actors/node/main.ts, on the main thread), and the replies to its asks.
 *
 *   listener  → node   ask `readiness` → ReadinessReport, ask `metrics` → Prometheus text
 *   listener, rpc → node   `listening {listener, address, port}`
 *   history   → node   ask `rebuild.lane` (starts a rebuild's replacement lane), ask `rebuild.stop` (stops and removes it)
 */
import type { ReadinessReport } from '../../api/operational.js';

export type ReadinessAsk = { readonly type: 'readiness' };
export type MetricsAsk = { readonly type: 'metrics' };

export type Listening = {
  readonly type: 'listening';
  readonly listener: 'api' | 'rpc_http' | 'rpc_ws';
  readonly address: string;
  readonly port: number;
};

/** A rebuild's replacement instance (actors/node/lanes.ts ReplacementInstance). */
export type RebuildLane = {
  readonly type: 'rebuild.lane';
  readonly processor: string;
  readonly instance: string;
  readonly fromBlock: number;
  readonly source: string;
};

export type RebuildStop = { readonly type: 'rebuild.stop'; readonly instance: string };

export type NodeInbox = ReadinessAsk | MetricsAsk | Listening | RebuildLane | RebuildStop;

export interface NodeReplies {
  readonly readiness: ReadinessReport;
  readonly metrics: string;
  readonly 'rebuild.lane': { readonly started: boolean };
  readonly 'rebuild.stop': { readonly stopped: boolean };
}
