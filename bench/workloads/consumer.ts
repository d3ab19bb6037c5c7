/**
 * Workload `consumer`: one durable consumer's read + acknowledge loop against a real node — `GET
 * …/consumers/{c}/changes?limit=L`, parse the batch, `POST …/ack` with its last cursor, repeat —
 * over a change log pre-filled by a fast devnet (real envelopes, rendered by the blob processor).
 * Each round creates `passes` consumers at `earliest_retained` (before the clock starts: creation
 * derives a scrypt hash) and lets them read the whole log one after the other — one consumer loop
 * at a time. The figure is changes read and acknowledged per second, with the node's and this
 * process's CPU beside it.
 *
 * Two settings of the node, both reported: *stressed* — the devnet that filled the log keeps
 * committing a block every 10 ms (100 blocks/s, ~0.3–0.8 of the node's cores) while the consumer
 * reads; *at 1 block/s* — the same node restarted on the same data directory with a block every
 * second (the slowest devnet pace that keeps the same chain: its timestamps step by
 * ceil(block time / 1 s); a mainnet node commits one block per 12 s, so this is still 12× busier).
 *
 * The client is what a careful consumer would run: keep-alive `node:http`, the body read as bytes
 * and every envelope parsed with JSON.parse (with fetch, its web streams and TextDecoder were about
 * a fifth of the client's CPU profile). Three loops, all one consumer and all acknowledging a batch only after it
 * was received and parsed (at-least-once is kept): `sequential` (read, ack, read…), `pipelined`
 * (the ack of batch N travels while N+1 is read) and `prefetched` (the read of batch N+1 is sent
 * before batch N is parsed, so the node serves N+1 while the client parses N; acks as pipelined).
 *
 * A fourth loop, `relay`, is prefetched too but parses no envelope: it keeps each page's bytes as
 * they came — what a relay into a queue or a file does — and reads only the first and last
 * envelope's `sequence` and the last `cursor` from them (checking that the batch continues the
 * previous one and holds last − first + 1 envelopes), then acknowledges. With JSON.parse out of
 * the client, it shows how fast the node itself delivers to one consumer.
 */
import { Agent, request as httpRequest } from 'node:http';
import { loadavg } from 'node:os';
import { startCpuMeter } from '../load/process-cpu.js';
import { startBenchNode, steadyDevnet, type BenchNode } from '../node.js';
import { percentile, summarize } from '../stats.js';
import type { Figure, Workload, WorkloadOptions } from '../workload.js';

interface Shape {
  readonly blockTimeMs: number;
  /** The devnet's pace for the second setting (≤ 1000 keeps the chain the fill produced). */
  readonly restBlockTimeMs: number;
  /** Changes the log must hold before the rounds start (or as many as the fill time allows, at least a tenth). */
  readonly changes: number;
  readonly fillSeconds: number;
  readonly batch: number;
  /** Consumers per round, each reading the whole log in turn (created before the clock starts). */
  readonly passes: number;
}

const FULL: Shape = { blockTimeMs: 10, restBlockTimeMs: 1000, changes: 3000, fillSeconds: 150, batch: 1000, passes: 10 };
const SMOKE: Shape = { blockTimeMs: 20, restBlockTimeMs: 1000, changes: 200, fillSeconds: 60, batch: 50, passes: 2 };
const CREDENTIAL = 'bench-consumer-credential';
/** A restarted node first replays the devnet to its stored head (thousands of blocks) before it is ready. */
const RESTART_READY_MS = 600_000;

interface RoundResult {
  readonly changes: number;
  readonly seconds: number;
  readonly batchMs: number[];
  readonly serverCores: number;
  readonly clientCores: number;
  readonly bytes: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/**
 * One HTTP exchange on a kept-alive connection; the body is read as bytes and, unless `bytes` is
 * set, decoded once as it ends (the parsing loops then hold only the string while they parse).
 */
function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: string; bytes?: boolean } = {}): Promise<{ status: number; text: string; body: Buffer | null }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? 'GET', headers: init.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        resolve(init.bytes && res.statusCode === 200 ? { status: 200, text: '', body } : { status: res.statusCode ?? 0, text: body.toString('utf8'), body: null });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

async function headSequence(node: BenchNode): Promise<number> {
  const reply = await call(`${node.baseUrl}/v1/processors/blobs/changes/head`);
  return Number((JSON.parse(reply.text) as { sequence: string }).sequence);
}

async function createConsumer(base: string, id: string): Promise<void> {
  const created = await call(base, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, role: 'required', start: { position: 'earliest_retained' }, leaseTtlSeconds: 300, credential: CREDENTIAL }),
  });
  if (created.status !== 201) throw new Error(`creating consumer ${id} answered ${created.status}: ${created.text}`);
}

type Mode = 'sequential' | 'pipelined' | 'prefetched' | 'relay';
const MODES: readonly Mode[] = ['sequential', 'pipelined', 'prefetched', 'relay'];

interface Batch {
  readonly count: number;
  readonly firstSequence: number;
  readonly lastSequence: number;
  readonly lastCursor: string;
}

/** Every envelope starts so (spec §2.3 field order); inside a JSON string the quotes would be escaped. */
const ENVELOPE_START = Buffer.from('{"apiVersion":"1","sequence":"');
const CURSOR_FIELD = '","cursor":"';
const DATA_END = Buffer.from('],"nextCursor":');

function parsedBatch(data: ReadonlyArray<{ sequence: string; cursor: string }>): Batch {
  const first = data[0];
  const last = data[data.length - 1];
  if (!first || !last) return { count: 0, firstSequence: 0, lastSequence: 0, lastCursor: '' };
  return { count: data.length, firstSequence: Number(first.sequence), lastSequence: Number(last.sequence), lastCursor: last.cursor };
}

/** A relay: the page's bytes kept as they came; only the first and last envelope's heads read. */
function relayedBatch(page: Buffer): Batch {
  const end = page.indexOf(DATA_END);
  const first = page.indexOf(ENVELOPE_START);
  if (end < 0) throw new Error('a consumer page without its data array');
  if (first < 0 || first > end) return { count: 0, firstSequence: 0, lastSequence: 0, lastCursor: '' };
  // One pass over the envelope starts counts them and finds the last.
  let count = 0;
  let last = first;
  for (let at = first; at >= 0 && at < end; at = page.indexOf(ENVELOPE_START, at + ENVELOPE_START.length)) {
    last = at;
    count += 1;
  }
  const sequenceAt = (start: number) => {
    const from = start + ENVELOPE_START.length;
    const to = page.indexOf(0x22, from);
    return { sequence: Number(page.toString('latin1', from, to)), after: to };
  };
  const head = sequenceAt(first);
  const tail = sequenceAt(last);
  const cursorFrom = tail.after + CURSOR_FIELD.length;
  if (page.toString('latin1', tail.after, cursorFrom) !== CURSOR_FIELD) throw new Error('an envelope without its cursor after the sequence');
  const lastCursor = page.toString('latin1', cursorFrom, page.indexOf(0x22, cursorFrom));
  if (count !== tail.sequence - head.sequence + 1) throw new Error(`a relayed batch of ${head.sequence}..${tail.sequence} holds ${count} envelopes`);
  return { count, firstSequence: head.sequence, lastSequence: tail.sequence, lastCursor };
}

async function round(node: BenchNode, label: string, shape: Shape, mode: Mode): Promise<RoundResult> {
  const base = `${node.baseUrl}/v1/processors/blobs/consumers`;
  const ids = Array.from({ length: shape.passes }, (_, pass) => `bench-${label}-${mode}-${pass}`);
  for (const id of ids) await createConsumer(base, id);
  const target = await headSequence(node);
  const headers = { 'x-node-consumer-credential': CREDENTIAL };
  const ackHeaders = { ...headers, 'content-type': 'application/json' };
  const relay = mode === 'relay';
  const read = async (id: string): Promise<string | Buffer> => {
    const reply = await call(`${base}/${id}/changes?limit=${shape.batch}`, { headers, bytes: relay });
    if (reply.status !== 200) throw new Error(`changes answered ${reply.status}: ${reply.text}`);
    return reply.body ?? reply.text;
  };
  const acknowledge = async (id: string, cursor: string): Promise<void> => {
    const acked = await call(`${base}/${id}/ack`, { method: 'POST', headers: ackHeaders, body: JSON.stringify({ cursor }) });
    if (acked.status !== 200) throw new Error(`ack answered ${acked.status}: ${acked.text}`);
  };
  const prefetching = mode === 'prefetched' || relay;
  const batchMs: number[] = [];
  let changes = 0;
  let bytes = 0;
  const server = startCpuMeter(node.pid);
  const client = startCpuMeter(null);
  const started = performance.now();
  for (const id of ids) {
    let last = 0;
    let pendingAck: Promise<void> | null = null;
    let prefetch: Promise<string | Buffer> | null = null;
    while (last < target) {
      const batchStarted = performance.now();
      const text = await (prefetch ?? read(id));
      // The next batch is asked for before this one is parsed (it is acknowledged only after).
      prefetch = prefetching ? read(id) : null;
      bytes += text.length;
      // A careful consumer parses every envelope; the relay reads only the page's first and last.
      // `page` stays referenced until the next batch: dropping the parsed page right after reading
      // its tail measured twice the client CPU per change (45–53 µs against 22–25; V8 then ran
      // over a hundred full collections per run), which would charge the client's GC to the loop.
      const page = typeof text === 'string' ? JSON.parse(text) as { data: Array<{ sequence: string; cursor: string }> } : null;
      const batch = page === null ? relayedBatch(text as Buffer) : parsedBatch(page.data);
      if (batch.count === 0) throw new Error(`consumer ${id} got an empty batch at ${last} of ${target}`);
      if (last > 0 && batch.firstSequence !== last + 1) throw new Error(`consumer ${id}: a batch starting at ${batch.firstSequence} followed ${last}`);
      if (pendingAck) await pendingAck;
      pendingAck = acknowledge(id, batch.lastCursor);
      if (mode === 'sequential') {
        await pendingAck;
        pendingAck = null;
      }
      changes += batch.count;
      last = batch.lastSequence;
      batchMs.push(performance.now() - batchStarted);
    }
    if (pendingAck) await pendingAck;
    // A batch read ahead past the target is delivered but never acknowledged; the consumer is deleted below.
    if (prefetch) await prefetch;
  }
  const seconds = (performance.now() - started) / 1000;
  const result = { changes, seconds, batchMs, serverCores: server(), clientCores: client(), bytes };
  for (const id of ids) await call(`${base}/${id}`, { method: 'DELETE' });
  return result;
}

/** Node CPU over a quiet stretch (no consumer), to subtract from the rounds' node CPU. */
async function idleCores(node: BenchNode, smoke: boolean): Promise<number> {
  const idle = startCpuMeter(node.pid);
  await new Promise((resolve) => setTimeout(resolve, smoke ? 1000 : 5000));
  return idle();
}

async function phase(node: BenchNode, label: string, title: string, shape: Shape, options: WorkloadOptions): Promise<Figure[]> {
  const loadAtStart = loadavg()[0]!;
  const idle = await idleCores(node, options.smoke);
  const runs: Record<Mode, RoundResult[]> = { sequential: [], pipelined: [], prefetched: [], relay: [] };
  for (let i = 0; i < options.rounds; i += 1) {
    for (const mode of MODES) runs[mode].push(await round(node, `${label}-${i}`, shape, mode));
  }
  const figure = (mode: Mode, name: string, unit: string, value: (run: RoundResult) => number, better?: 'higher' | 'lower'): Figure => ({
    name: `${title}, ${mode}: ${name}`, unit, ...(better ? { better } : {}), ...summarize(runs[mode].map(value)),
  });
  const p = (run: RoundResult, q: number) => percentile([...run.batchMs].sort((a, b) => a - b), q);
  return [
    { name: `${title}: machine load average (1 min) at start`, unit: 'load', min: loadAtStart, median: loadAtStart, max: loadAtStart },
    { name: `${title}: node CPU while idle (devnet committing, no consumer)`, unit: 'cores', min: idle, median: idle, max: idle },
    ...MODES.flatMap((mode) => [
      figure(mode, 'changes read per round (log × passes)', 'changes', (run) => run.changes),
      figure(mode, 'read + ack throughput', 'changes/s', (run) => run.changes / run.seconds, 'higher'),
      figure(mode, 'batch p50', 'ms', (run) => p(run, 50), 'lower'),
      figure(mode, 'batch p99', 'ms', (run) => p(run, 99), 'lower'),
      figure(mode, 'envelope JSON received', 'MB/s', (run) => run.bytes / 1e6 / run.seconds),
      figure(mode, 'server CPU', 'cores', (run) => run.serverCores),
      figure(mode, 'consumer (this process) CPU', 'cores', (run) => run.clientCores),
      figure(mode, 'node CPU per change above idle', 'µs', (run) => ((run.serverCores - idle) * run.seconds * 1e6) / run.changes, 'lower'),
      figure(mode, 'consumer CPU per change', 'µs', (run) => (run.clientCores * run.seconds * 1e6) / run.changes, 'lower'),
    ]),
  ];
}

export const consumerWorkload: Workload = {
  name: 'consumer',
  description: 'one durable consumer\'s read + ack loop (changes/s) over a pre-filled change log of a real node',
  async run(options: WorkloadOptions): Promise<Figure[]> {
    const shape = options.smoke ? SMOKE : FULL;
    const limitSet = `limits.max_page_limit=${Math.max(1000, shape.batch)}`;
    // CDN_BENCH_CONSUMER_CPU_PROF=<dir>: the node runs with --cpu-prof (a profile per thread, written at its exit).
    const profileDir = process.env.CDN_BENCH_CONSUMER_CPU_PROF;
    let node = await startBenchNode([...steadyDevnet(shape.blockTimeMs), limitSet], profileDir ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } : {});
    try {
      const fillStarted = performance.now();
      await node.waitFor(`${shape.changes} changes`, async () => (await headSequence(node)) >= shape.changes
        || (performance.now() - fillStarted > shape.fillSeconds * 1000 && (await headSequence(node)) >= shape.changes / 10), (shape.fillSeconds + 60) * 1000);
      const stressed = await phase(node, 'stressed', `stressed (block every ${shape.blockTimeMs} ms)`, shape, options);
      node = await node.restart([...steadyDevnet(shape.restBlockTimeMs), limitSet], RESTART_READY_MS);
      const rest = await phase(node, 'rest', `at one block per ${shape.restBlockTimeMs / 1000} s`, shape, options);
      return [
        { name: 'batch size (limit)', unit: 'changes', min: shape.batch, median: shape.batch, max: shape.batch },
        ...stressed,
        ...rest,
      ];
    } finally {
      await node.stop();
    }
  },
};
