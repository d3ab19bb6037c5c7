/**
 * `node sse-clients.js --url U --server-pid P --streams N --duration S [--head-url H]`: one process of
 * the SSE load generator (bench/load/sse-client-pool.ts runs several). Opens N raw `http.get` streams
 * in waves of `connect-concurrency`; with `--head-url` (a change-head route answering `{cursor}`) each
 * wave first reads the current head and resumes after it, so a stream starts live instead of
 * replaying what changed while earlier waves connected. Then it prints `{"ready": true}`, waits for a
 * line on stdin, and for S seconds records, per change frame, `Date.now() − emittedAt` (the
 * processor's commit → this client) and counts events, and how many cores this process and the
 * server kept busy meanwhile. Prints one JSON line (SseClientsReport). With `--encoding gzip` it
 * sends `Accept-Encoding: gzip` and inflates gzip-coded responses as they arrive (sync flush), timing
 * each event once inflated.
 */
import { get, type ClientRequest } from 'node:http';
import { constants, createGunzip } from 'node:zlib';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startCpuMeter } from './process-cpu.js';
import { LatencyHistogram } from './latency-histogram.js';
import { changeOfFrame, FrameSplitter } from './sse-frame.js';

export interface SseClientsReport {
  readonly requested: number;
  readonly established: number;
  /** Established streams that ended before the measurement was over. */
  readonly disconnects: number;
  readonly rampSeconds: number;
  readonly windowSeconds: number;
  readonly events: number;
  /** Commit → client latencies of the window as [ms, count]. */
  readonly latencyCounts: Array<[number, number]>;
  /** Lowest and highest change sequence seen in the window (null when none arrived). */
  readonly sequences: { readonly first: number; readonly last: number } | null;
  /** Cores kept busy during the window by the server and by this process. */
  readonly serverCpuCores: number;
  readonly clientCpuCores: number;
  /** This process's event-loop delay p99 in the window: how late it read its own sockets. */
  readonly clientLoopDelayP99Ms: number;
  /** Streams whose response was `Content-Encoding: gzip`. */
  readonly gzipStreams: number;
  /** Response body bytes received in the window, as they came over the wire (before inflating). */
  readonly bodyBytes: number;
}

const { values } = parseArgs({
  options: {
    url: { type: 'string' }, 'head-url': { type: 'string' }, 'server-pid': { type: 'string' }, streams: { type: 'string', default: '50' }, duration: { type: 'string', default: '10' },
    'connect-concurrency': { type: 'string', default: '250' }, encoding: { type: 'string', default: 'identity' }, 'settle-ms': { type: 'string', default: '1000' }, 'ramp-timeout-ms': { type: 'string', default: '120000' },
  },
});
if (!values.url || !values['server-pid']) throw new Error('sse-clients needs --url and --server-pid');
const requested = Number(values.streams);
const concurrency = Number(values['connect-concurrency']);
if (values.encoding !== 'identity' && values.encoding !== 'gzip') throw new Error(`--encoding is identity or gzip, not ${values.encoding}`);
const requestHeaders = { accept: 'text/event-stream', ...(values.encoding === 'gzip' ? { 'accept-encoding': 'gzip' } : {}) };

const requests: ClientRequest[] = [];
const histogram = new LatencyHistogram();
let established = 0;
let disconnects = 0;
let measuring = false;
let finished = false;
let events = 0;
let gzipStreams = 0;
let bodyBytes = 0;
let firstSequence = Infinity;
let lastSequence = -Infinity;

function onFrame(frame: string): void {
  if (!measuring) return;
  const change = changeOfFrame(frame);
  if (!change) return;
  events += 1;
  histogram.record(Date.now() - change.emittedAtMs);
  if (change.sequence < firstSequence) firstSequence = change.sequence;
  if (change.sequence > lastSequence) lastSequence = change.sequence;
}

/** Resolves once the stream is open (true) or has failed to open (false). */
function openStream(url: string): Promise<boolean> {
  return new Promise((settle) => {
    const request = get(url, { agent: false, headers: requestHeaders }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        settle(false);
        return;
      }
      established += 1;
      settle(true);
      const splitter = new FrameSplitter();
      // The fields read are ASCII; latin1 never splits a character across chunks and decodes fastest.
      const onText = (text: string) => {
        for (const frame of splitter.push(text)) onFrame(frame);
      };
      const coding = res.headers['content-encoding'];
      if (coding === 'gzip') {
        gzipStreams += 1;
        const gunzip = createGunzip({ flush: constants.Z_SYNC_FLUSH, finishFlush: constants.Z_SYNC_FLUSH });
        gunzip.setEncoding('latin1');
        gunzip.on('data', onText);
        gunzip.on('error', () => res.destroy());
        res.on('data', (raw: Buffer) => {
          if (measuring) bodyBytes += raw.length;
          gunzip.write(raw);
        });
      } else if (coding === undefined || coding === 'identity') {
        res.setEncoding('latin1');
        res.on('data', (text: string) => {
          if (measuring) bodyBytes += text.length;
          onText(text);
        });
      } else {
        res.destroy();
      }
      res.on('close', () => {
        if (!finished) disconnects += 1;
      });
      // A reset stream is a disconnect (counted on 'close'), not a crash of the load generator.
      res.on('error', () => {});
    });
    request.on('error', () => settle(false));
    requests.push(request);
  });
}

/** One JSON GET on its own connection: a kept-alive socket the server has just timed out would reset. */
function getJson(url: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (text: string) => { body += text; });
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`GET ${url} answered ${res.statusCode}: ${body.slice(0, 200)}`));
        else resolve(JSON.parse(body));
      });
    }).on('error', reject);
  });
}

/**
 * The head, asked up to three times: on a starved machine this process can write a request more
 * than 10 s after its connection opened, and uWS closes a connection that idle without answering.
 */
async function headJson(url: string): Promise<unknown> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await getJson(url);
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

async function streamUrl(): Promise<string> {
  if (!values['head-url']) return values.url!;
  const { cursor } = (await headJson(values['head-url'])) as { cursor: string | null };
  if (cursor === null) return values.url!;
  const url = new URL(values.url!);
  url.searchParams.set('after', cursor);
  return url.toString();
}

/** The histogram records the sampling timer's intervals; the delay is what exceeds this. */
const LOOP_DELAY_RESOLUTION_MS = 2;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function ramp(timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const timeUp = sleep(timeoutMs);
  let started = 0;
  while (started < requested && Date.now() < deadline) {
    const url = await streamUrl();
    const wave = Math.min(concurrency, requested - started);
    started += wave;
    await Promise.race([Promise.all(Array.from({ length: wave }, () => openStream(url))), timeUp]);
  }
}

function awaitGo(): Promise<void> {
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  return new Promise((resolve) => process.stdin.once('data', () => resolve()));
}

const rampStarted = performance.now();
await ramp(Number(values['ramp-timeout-ms']));
const rampSeconds = (performance.now() - rampStarted) / 1000;
await sleep(Number(values['settle-ms']));
await awaitGo();
const serverCpu = startCpuMeter(Number(values['server-pid']));
const clientCpu = startCpuMeter(null);
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
loopDelay.enable();
measuring = true;
const windowStarted = performance.now();
await sleep(Number(values.duration) * 1000);
measuring = false;
finished = true;
loopDelay.disable();
const report: SseClientsReport = {
  requested,
  established,
  disconnects,
  rampSeconds,
  windowSeconds: (performance.now() - windowStarted) / 1000,
  events,
  latencyCounts: histogram.entries(),
  sequences: events === 0 ? null : { first: firstSequence, last: lastSequence },
  serverCpuCores: serverCpu(),
  clientCpuCores: clientCpu(),
  clientLoopDelayP99Ms: Math.max(0, loopDelay.percentile(99) / 1e6 - LOOP_DELAY_RESOLUTION_MS),
  gzipStreams,
  bodyBytes,
};
for (const request of requests) request.destroy();
process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(0));
