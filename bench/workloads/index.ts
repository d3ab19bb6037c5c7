/**
 * Every bench workload, in the order `npm run bench` runs them when none is named. Adding one: write
 * `bench/workloads/<name>.ts` exporting a `Workload`, and add one line below.
 */
import type { Workload } from '../workload.js';
import { consumerWorkload } from './consumer.js';
import { finalityWorkload } from './finality.js';
import { erc20Workload } from './erc20.js';
import { ingestWorkload } from './ingest.js';
import { jsonrpcWorkload } from './jsonrpc.js';
import { queryWorkload } from './query.js';
import { runtimeWorkload } from './runtime.js';
import { sseWorkload } from './sse.js';
import { snapshotWorkload } from './snapshot.js';
import { p2pWorkload } from './p2p.js';
import { p2pLatencyWorkload } from './p2p-latency.js';
import { ponderWorkload } from './ponder.js';
import { verifyWorkload } from './verify.js';
import { backfillWorkload } from './backfill.js';
import { fanoutWorkload } from './fanout.js';
import { era1Workload } from './era1.js';
import { sinkWorkload } from './sink.js';

export const WORKLOADS: readonly Workload[] = [
  runtimeWorkload,
  ingestWorkload,
  verifyWorkload,
  queryWorkload,
  sseWorkload,
  consumerWorkload,
  jsonrpcWorkload,
  snapshotWorkload,
  finalityWorkload,
  p2pWorkload,
  p2pLatencyWorkload,
  erc20Workload,
  ponderWorkload,
  backfillWorkload,
  fanoutWorkload,
  era1Workload,
  sinkWorkload,
];

export function findWorkload(name: string): Workload | undefined {
  return WORKLOADS.find((workload) => workload.name === name);
}
