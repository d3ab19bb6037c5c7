/**
 * Entry point of every actor's worker thread: loads the actor module named in workerData, wires its
 * mailbox and links, and runs its handler one message at a time.
 *
 * Control from the root (see protocol.ts ToWorker): link, link-failed, unlink, inbound, stop,
 * metrics, root (replies to asks of the root), task-done. Sends to the root: FromWorker.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { getHeapStatistics } from 'node:v8';
import { Registry } from 'prom-client';
import { pathToFileURL } from 'node:url';
import { encode, decode } from './codec.js';
import { CodedError } from './errors.js';
import { Inbox, type Delivery } from './inbox.js';
import { Link, isBatch } from './link.js';
import { createLogger, errorFields } from './log.js';
import { MailboxControl } from './mailbox.js';
import { ROOT, type FromWorker, type Message, type ToWorker, type WireEntry, type WorkerBoot, type RemoteError } from './protocol.js';
import { ActorExitedError, AskTimeoutError, fromRemoteError, toRemoteError } from './remote-error.js';
import type { ActorContext, ActorDefinition } from './actor.js';
import { buffersOf } from './transfer.js';

const DEFAULT_ASK_TIMEOUT_MS = 30_000;

const boot = workerData as WorkerBoot;
const control = parentPort!;
const mailbox = new MailboxControl(boot.mailbox);
const log = createLogger({ lane: boot.name, level: boot.logLevel, maxLinesPerSecond: boot.logRate });
const metrics = new Registry();
metrics.setDefaultLabels({ actor: boot.name });

interface PendingAsk {
  readonly to: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

const links = new Map<string, Link>();
const connectRequested = new Set<string>();
const pendingAsks = new Map<number, PendingAsk>();
const pendingTasks = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
const inboundPorts = new Set<MessagePort>();
const inbox = new Inbox();
let nextId = 1;
let definition: ActorDefinition<unknown, unknown, Message> | null = null;
let state: unknown;
let handling = false;
let stopping = false;

function post(message: FromWorker, transfer: readonly ArrayBuffer[] = []): void {
  control.postMessage(message, transfer as ArrayBuffer[]);
}

function requestConnect(to: string): void {
  if (connectRequested.has(to)) return;
  connectRequested.add(to);
  post({ t: 'connect', to });
}

function linkTo(to: string): Link {
  let link = links.get(to);
  if (!link) {
    link = new Link(to, boot.batching, settleAsk, requestConnect);
    links.set(to, link);
  }
  return link;
}

function settleAsk(askId: number, ok: boolean, value: unknown): void {
  const pending = pendingAsks.get(askId);
  if (!pending) return;
  pendingAsks.delete(askId);
  clearTimeout(pending.timer);
  if (ok) pending.resolve(value);
  else pending.reject(fromRemoteError(value as RemoteError));
}

function rejectAsksTo(to: string, error: Error): void {
  for (const [id, pending] of pendingAsks) {
    if (pending.to !== to) continue;
    pendingAsks.delete(id);
    clearTimeout(pending.timer);
    pending.reject(error);
  }
}

function send(to: string, message: Message): Promise<void> {
  if (to === ROOT) {
    post({ t: 'root', bytes: encode([0, boot.name, message] satisfies WireEntry) });
    return Promise.resolve();
  }
  return linkTo(to).send([0, boot.name, message]);
}

function ask<Reply>(to: string, message: Message, timeoutMs = DEFAULT_ASK_TIMEOUT_MS): Promise<Reply> {
  const askId = nextId++;
  return new Promise<Reply>((resolve, reject) => {
    const timer = setTimeout(() => {
      pendingAsks.delete(askId);
      reject(new AskTimeoutError(to, message.type, timeoutMs));
    }, timeoutMs);
    pendingAsks.set(askId, { to, resolve: resolve as (value: unknown) => void, reject, timer });
    const entry: WireEntry = [1, boot.name, askId, message];
    if (to === ROOT) post({ t: 'root', bytes: encode(entry) });
    else linkTo(to).send(entry).catch((error: Error) => settleAsk(askId, false, toRemoteError(error)));
  });
}

function runTask<Result>(task: string, input: unknown, transfer: readonly ArrayBufferView[] = []): Promise<Result> {
  const id = nextId++;
  return new Promise<Result>((resolve, reject) => {
    pendingTasks.set(id, { resolve: resolve as (value: unknown) => void, reject });
    post({ t: 'task', id, name: task, input }, buffersOf(transfer));
  });
}

const ctx: ActorContext = {
  name: boot.name,
  lane: boot.lane,
  args: boot.args,
  log,
  metrics,
  send,
  ask,
  runTask,
  ready: () => post({ t: 'status', state: 'ready' }),
  degraded: (reason: string) => post({ t: 'status', state: 'degraded', reason }),
};

function receiveInbound(from: string, port: MessagePort, bytes: Uint8Array): void {
  const decoded = decode<WireEntry | WireEntry[]>(bytes);
  const entries = isBatch(decoded) ? decoded : [decoded];
  for (const entry of entries) {
    if (entry[0] === 0) inbox.push({ from: entry[1], askId: null, message: entry[2], port });
    else if (entry[0] === 1) inbox.push({ from: entry[1], askId: entry[2], message: entry[3], port });
  }
  mailbox.noteReceived(entries.length);
  drain();
}

function reply(delivery: Delivery, ok: boolean, value: unknown): void {
  const bytes = encode([2, delivery.askId!, ok, value] satisfies WireEntry);
  delivery.port.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
}

let crashed = false;

/** Let it crash: report why, release native resources, and end the worker; the supervisor decides what next. */
function crash(error: unknown, memoryBudget = false): void {
  if (crashed) return;
  crashed = true;
  log.error('actor crashed', errorFields(error));
  post({ t: 'crashed', reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error), memoryBudget });
  try {
    if (definition?.abort) definition.abort(state);
  } catch (abortError) {
    log.error('actor abort hook failed', errorFields(abortError));
  }
  mailbox.close();
  // Replies already posted on actor ports reach their askers before the exit is seen.
  setTimeout(() => process.exit(1), 25);
}

process.on('uncaughtException', (error) => crash(error));
process.on('unhandledRejection', (error) => crash(error));

/**
 * V8 kills a worker that reaches its heap limit without running any code, which is fatal to the
 * whole process when the worker holds native sockets. Stopping at 90% of the budget keeps the
 * death clean; V8's hard limit remains the backstop.
 */
function watchMemory(): void {
  const budget = boot.memoryMb * 1024 * 1024;
  const check = () => {
    const heap = getHeapStatistics();
    const used = heap.used_heap_size;
    mailbox.setHeapUsed(used);
    mailbox.setHeapTotals(heap.total_heap_size, heap.external_memory);
    if (used > budget * 0.9) crash(new Error(`out of memory: heap ${Math.round(used / 1048576)} MB reached 90% of its budget of ${boot.memoryMb} MB`), true);
  };
  check();
  setInterval(check, 100).unref();
}

/** Handles queued deliveries one at a time; synchronous handlers never yield to the event loop between messages. */
function drain(): void {
  if (handling || definition === null || stopping || crashed) return;
  handling = true;
  void (async () => {
    for (let delivery = inbox.shift(); delivery !== undefined; delivery = inbox.shift()) {
      let result: unknown;
      try {
        result = definition!.handle(delivery.message, state, ctx, delivery.from);
        if (result instanceof Promise) result = await result;
      } catch (error) {
        mailbox.release();
        if (delivery.askId !== null) reply(delivery, false, toRemoteError(error));
        if (!(error instanceof CodedError)) return setImmediate(() => crash(error));
        continue;
      }
      mailbox.release();
      if (delivery.askId !== null) reply(delivery, true, result);
      if (stopping) break;
    }
    handling = false;
    if (stopping) finishStop();
  })();
}

async function stop(): Promise<void> {
  stopping = true;
  if (!handling) await finishStop();
}

let stopped = false;
async function finishStop(): Promise<void> {
  if (stopped) return;
  stopped = true;
  try {
    if (definition?.stop) await definition.stop(state, ctx);
  } catch (error) {
    log.error('actor stop failed', errorFields(error));
  }
  for (const link of links.values()) link.fail('actor stopped');
  for (const port of inboundPorts) port.close();
  mailbox.close();
  post({ t: 'stopped' });
  process.exit(0);
}

control.on('message', (message: ToWorker) => {
  switch (message.t) {
    case 'link':
      connectRequested.delete(message.to);
      linkTo(message.to).bind(message.port, message.mailbox);
      return;
    case 'link-failed':
      connectRequested.delete(message.to);
      linkTo(message.to).fail(message.reason);
      rejectAsksTo(message.to, new ActorExitedError(message.to));
      return;
    case 'unlink':
      links.get(message.to)?.unbind();
      rejectAsksTo(message.to, new ActorExitedError(message.to));
      return;
    case 'inbound': {
      const { from, port } = message;
      inboundPorts.add(port);
      port.on('message', (bytes: Uint8Array) => receiveInbound(from, port, bytes));
      port.on('close', () => inboundPorts.delete(port));
      return;
    }
    case 'root': {
      const entry = decode<WireEntry>(message.bytes);
      if (entry[0] === 2) settleAsk(entry[1], entry[2], entry[3]);
      return;
    }
    case 'task-done': {
      const task = pendingTasks.get(message.id);
      if (!task) return;
      pendingTasks.delete(message.id);
      if (message.ok) task.resolve(message.value);
      else task.reject(fromRemoteError(message.value as RemoteError));
      return;
    }
    case 'metrics':
      void metrics.getMetricsAsJSON().then((json) => post({ t: 'metrics', id: message.id, json }));
      return;
    case 'stop':
      void stop();
      return;
    case 'crash':
      crash(new Error(message.reason));
      return;
  }
});

async function start(): Promise<void> {
  watchMemory();
  const moduleUrl = boot.module.startsWith('file:') ? boot.module : pathToFileURL(boot.module).href;
  const loaded = (await import(moduleUrl)) as { default: ActorDefinition<unknown, unknown, Message> };
  state = await loaded.default.init(ctx);
  definition = loaded.default;
  drain();
}

start().catch((error) => crash(error));
