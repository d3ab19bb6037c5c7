/**
 * Workload `consumer`: one durable consumer's read + acknowledge loop against a real node — `GET
 * …/consumers/{c}/changes?limit=L`, parse the batch, `POST …/ack` with its last cursor, repeat —
 * over a change log pre-filled by a fast devnet (real envelopes, rendered by the blob processor).
 * Each round creates `passes` consumers at `earliest_retained` (before the clock starts: creation
 * derives a scrypt hash) and lets them read the whole log one after the other — one consumer loop
 * at a time. The figure is changes read and acknowledged per second, with the node's and this
 * process's CPU beside it (the devnet keeps committing during the rounds, as on a live node).
 */
import { loadavg } from 'node:os';
import { startCpuMeter } from '../load/process-cpu.js';
import { startBenchNode, steadyDevnet, type BenchNode } from '../node.js';
import { percentile, summarize } from '../stats.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

interface Shape {
  readonly blockTimeMs: number;
  /** Changes the log must hold before the rounds start (or as many as the fill time allows, at least a tenth). */
  readonly changes: number;
  readonly fillSeconds: number;
  readonly batch: number;
  /** Consumers per round, each reading the whole log in turn (created before the clock starts). */
  readonly passes: number;
}

const FULL: Shape = { blockTimeMs: 10, changes: 3000, fillSeconds: 150, batch: 1000, passes: 10 };
const SMOKE: Shape = { blockTimeMs: 20, changes: 200, fillSeconds: 60, batch: 50, passes: 2 };
const CREDENTIAL = 'bench-consumer-credential';

interface RoundResult {
  readonly changes: number;
  readonly seconds: number;
  readonly batchMs: number[];
  readonly serverCores: number;
  readonly clientCores: number;
  readonly bytes: number;
}

async function headSequence(node: BenchNode): Promise<number> {
  const response = await fetch(`${node.baseUrl}/v1/processors/blobs/changes/head`);
  return Number(((await response.json()) as { sequence: string }).sequence);
}

async function call(url: string, init: RequestInit = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(url, init);
  return { status: response.status, text: await response.text() };
}

async function createConsumer(base: string, id: string): Promise<void> {
  const created = await call(base, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, role: 'required', start: { position: 'earliest_retained' }, leaseTtlSeconds: 300, credential: CREDENTIAL }),
  });
  if (created.status !== 201) throw new Error(`creating consumer ${id} answered ${created.status}: ${created.text}`);
}

/**
 * `sequential`: read a batch, then acknowledge it, then read the next. `pipelined`: the
 * acknowledgement of batch N travels while batch N+1 is read (still one consumer; an
 * acknowledgement is never sent before its batch was received and applied).
 */
type Mode = 'sequential' | 'pipelined';

async function round(node: BenchNode, index: number, shape: Shape, mode: Mode): Promise<RoundResult> {
  const base = `${node.baseUrl}/v1/processors/blobs/consumers`;
  const ids = Array.from({ length: shape.passes }, (_, pass) => `bench-${mode}-${index}-${pass}`);
  for (const id of ids) await createConsumer(base, id);
  const target = await headSequence(node);
  const headers = { 'x-node-consumer-credential': CREDENTIAL };
  const ackHeaders = { ...headers, 'content-type': 'application/json' };
  const acknowledge = async (id: string, cursor: string): Promise<void> => {
    const acked = await call(`${base}/${id}/ack`, { method: 'POST', headers: ackHeaders, body: JSON.stringify({ cursor }) });
    if (acked.status !== 200) throw new Error(`ack answered ${acked.status}: ${acked.text}`);
  };
  const batchMs: number[] = [];
  let read = 0;
  let bytes = 0;
  const server = startCpuMeter(node.pid);
  const client = startCpuMeter(null);
  const started = performance.now();
  for (const id of ids) {
    let last = 0;
    let pendingAck: Promise<void> | null = null;
    while (last < target) {
      const batchStarted = performance.now();
      const reply = await call(`${base}/${id}/changes?limit=${shape.batch}`, { headers });
      if (reply.status !== 200) throw new Error(`changes answered ${reply.status}: ${reply.text}`);
      bytes += reply.text.length;
      const page = JSON.parse(reply.text) as { data: Array<{ sequence: string; cursor: string }> };
      if (page.data.length === 0) throw new Error(`consumer ${id} got an empty batch at ${last} of ${target}`);
      const tail = page.data[page.data.length - 1]!;
      if (pendingAck) await pendingAck;
      pendingAck = acknowledge(id, tail.cursor);
      if (mode === 'sequential') {
        await pendingAck;
        pendingAck = null;
      }
      read += page.data.length;
      last = Number(tail.sequence);
      batchMs.push(performance.now() - batchStarted);
    }
    if (pendingAck) await pendingAck;
  }
  const seconds = (performance.now() - started) / 1000;
  const result = { changes: read, seconds, batchMs, serverCores: server(), clientCores: client(), bytes };
  for (const id of ids) await call(`${base}/${id}`, { method: 'DELETE' });
  return result;
}

export const consumerWorkload: Workload = {
  name: 'consumer',
  description: 'one durable consumer\'s read + ack loop (changes/s) over a pre-filled change log of a real node',
  async run(options: WorkloadOptions): Promise<Figure[]> {
    const shape = options.smoke ? SMOKE : FULL;
    const loadAtStart = loadavg()[0]!;
    const node = await startBenchNode([...steadyDevnet(shape.blockTimeMs), `limits.max_page_limit=${Math.max(1000, shape.batch)}`]);
    try {
      const fillStarted = performance.now();
      await node.waitFor(`${shape.changes} changes`, async () => (await headSequence(node)) >= shape.changes
        || (performance.now() - fillStarted > shape.fillSeconds * 1000 && (await headSequence(node)) >= shape.changes / 10), (shape.fillSeconds + 60) * 1000);
      const idle = startCpuMeter(node.pid);
      await new Promise((resolve) => setTimeout(resolve, options.smoke ? 1000 : 5000));
      const idleCores = idle();
      const runs: Record<Mode, RoundResult[]> = { sequential: [], pipelined: [] };
      for (let i = 0; i < options.rounds; i += 1) {
        for (const mode of ['sequential', 'pipelined'] as const) runs[mode].push(await round(node, i, shape, mode));
      }
      const figure = (mode: Mode, name: string, unit: string, value: (run: RoundResult) => number, better?: 'higher' | 'lower'): Figure => ({
        name: `${mode}: ${name}`, unit, ...(better ? { better } : {}), ...summarize(runs[mode].map(value)),
      });
      const p = (run: RoundResult, q: number) => percentile([...run.batchMs].sort((a, b) => a - b), q);
      return [
        { name: 'machine load average (1 min) at start', unit: 'load', min: loadAtStart, median: loadAtStart, max: loadAtStart },
        { name: 'batch size (limit)', unit: 'changes', min: shape.batch, median: shape.batch, max: shape.batch },
        { name: 'node CPU while idle (devnet committing, no consumer)', unit: 'cores', min: idleCores, median: idleCores, max: idleCores },
        ...(['sequential', 'pipelined'] as const).flatMap((mode) => [
          figure(mode, 'changes read per round (log × passes)', 'changes', (run) => run.changes),
          figure(mode, 'read + ack throughput', 'changes/s', (run) => run.changes / run.seconds, 'higher'),
          figure(mode, 'batch p50', 'ms', (run) => p(run, 50), 'lower'),
          figure(mode, 'batch p99', 'ms', (run) => p(run, 99), 'lower'),
          figure(mode, 'envelope JSON received', 'MB/s', (run) => run.bytes / 1e6 / run.seconds),
          figure(mode, 'server CPU', 'cores', (run) => run.serverCores),
          figure(mode, 'consumer (this process) CPU', 'cores', (run) => run.clientCores),
          figure(mode, 'node CPU per change above idle', 'µs', (run) => ((run.serverCores - idleCores) * run.seconds * 1e6) / run.changes, 'lower'),
          figure(mode, 'consumer CPU per change', 'µs', (run) => (run.clientCores * run.seconds * 1e6) / run.changes, 'lower'),
        ]),
      ];
    } finally {
      await node.stop();
    }
  },
};
