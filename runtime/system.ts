/**
 * The actor system, run by the root (main thread): starts each actor in its own worker with its
 * memory budget, brokers the direct channels between actors, applies each lane's supervision
 * decisions, answers workers' asks of the root, runs CPU tasks on the pool, and stops everything in order.
 */
import { EventEmitter } from 'node:events';
import { MessageChannel, Worker, type TransferListItem } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { encode, decode } from './codec.js';
import { Link } from './link.js';
import { MailboxControl, createMailboxBuffer, type MailboxBuffer } from './mailbox.js';
import { ROOT, type AnyMessage, type FromWorker, type Message, type ToWorker, type WireEntry, type RemoteError } from './protocol.js';
import { ActorExitedError, AskTimeoutError, fromRemoteError, toRemoteError } from './remote-error.js';
import { LaneSupervisor, type ChildSpec, type LaneSpec, type LaneState } from './supervisor.js';
import type { TaskPool } from './pool.js';
import { errorFields, type Logger } from './log.js';
import { bundledModule } from './bundled.js';
import { buffersOf } from './transfer.js';

const HOST = fileURLToPath(new URL('./worker-entry.js', import.meta.url));

export interface SystemOptions {
  readonly log: Logger;
  readonly logLevel: string;
  readonly logRate: number;
  /** Coalesce the messages one sender posts in one tick into a single transfer. */
  readonly batching?: boolean;
  readonly pool?: TaskPool;
  /**
   * Start watchdog: a lane whose workers have not all reported ready (or degraded) this long after
   * the lane started gets the names as its last error and an event
   * `'start-timeout' (lane, actors: string[], required: boolean, timeoutSeconds: number)`. Off when
   * absent; a lane's own `startTimeoutMs` overrides it.
   */
  readonly startTimeoutMs?: number;
}

/** Handles messages and asks sent to the root (`node`), of its inbox `Inbox`; the return value answers an ask. */
export type RootHandler<Inbox extends Message = AnyMessage> = (message: Inbox, from: string) => unknown;

interface Incarnation {
  readonly worker: Worker;
  readonly startedAt: number;
  stopRequested: boolean;
  exitReason: string | null;
}

interface Slot {
  readonly spec: ChildSpec;
  readonly supervisor: LaneSupervisor;
  mailbox: MailboxBuffer;
  current: Incarnation | null;
  /** Actors (and the root) holding a link to this actor's current incarnation. */
  linkedFrom: Set<string>;
  /** Actors waiting for this actor to (re)start before they can link to it. */
  waitingConnects: string[];
  restartTimer: NodeJS.Timeout | null;
  oomKills: number;
}

export interface LaneStatus {
  readonly lane: string;
  readonly required: boolean;
  readonly state: LaneState;
  readonly lastError: string | null;
  readonly lastErrorAt: string | null;
  readonly failedReason: string | null;
  readonly restarts: number;
  readonly actors: ReadonlyArray<{ readonly name: string; readonly running: boolean; readonly ready: boolean; readonly startedAt: string | null }>;
}

export interface ActorStats {
  readonly name: string;
  readonly lane: string;
  readonly mailboxDepth: number;
  readonly mailboxCapacity: number;
  readonly handled: bigint;
  readonly heapUsedBytes: number;
  readonly heapTotalBytes: number;
  readonly externalBytes: number;
  readonly running: boolean;
  readonly oomKills: number;
}

export class ActorSystem extends EventEmitter {
  private readonly slots = new Map<string, Slot>();
  private readonly lanes = new Map<string, LaneSupervisor>();
  private readonly rootLinks = new Map<string, Link>();
  private readonly rootAsks = new Map<number, { to: string; resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private readonly metricsRequests = new Map<number, (json: unknown) => void>();
  /** Each running worker's last metrics answer, for a scrape it is too busy to answer in time. */
  private readonly lastMetrics = new Map<Slot, { incarnation: Incarnation | null; json: unknown }>();
  private rootHandler: RootHandler<Message> = (message) => {
    throw new Error(`the root does not handle '${message.type}'`);
  };
  private nextId = 1;
  private stopping = false;
  private readonly startTimers = new Set<NodeJS.Timeout>();

  constructor(private readonly options: SystemOptions) {
    super();
  }

  /** Answers messages and asks addressed to the root; `Inbox` is what the root accepts (the wire is not checked). */
  handleRoot<Inbox extends Message = AnyMessage>(handler: RootHandler<Inbox>): void {
    this.rootHandler = handler as RootHandler<Message>;
  }

  startLane(spec: LaneSpec): void {
    if (this.lanes.has(spec.lane)) throw new Error(`lane '${spec.lane}' already started`);
    const supervisor = new LaneSupervisor(spec);
    this.lanes.set(spec.lane, supervisor);
    for (const child of spec.children) {
      if (this.slots.has(child.name)) throw new Error(`actor name '${child.name}' is used twice`);
      // A name that belonged to a removed lane (stopLane): the root's failed link to it is not this actor's.
      if (this.rootLinks.get(child.name)?.failed) this.rootLinks.delete(child.name);
      this.slots.set(child.name, {
        spec: child, supervisor, mailbox: createMailboxBuffer(child.mailboxCapacity), current: null,
        linkedFrom: new Set(), waitingConnects: [], restartTimer: null, oomKills: 0,
      });
    }
    for (const child of spec.children) this.spawn(this.slots.get(child.name)!);
    const timeoutMs = spec.startTimeoutMs ?? this.options.startTimeoutMs;
    if (timeoutMs !== undefined) {
      const timer = setTimeout(() => {
        this.startTimers.delete(timer);
        this.checkStarted(supervisor, timeoutMs);
      }, timeoutMs);
      timer.unref();
      this.startTimers.add(timer);
    }
  }

  private checkStarted(supervisor: LaneSupervisor, timeoutMs: number): void {
    if (this.stopping || supervisor.state === 'failed' || supervisor.state === 'stopped') return;
    const pending = supervisor.pendingChildren();
    if (pending.length === 0) return;
    supervisor.onStartTimeout(pending, timeoutMs / 1000, Date.now());
    this.emit('start-timeout', supervisor.lane, pending, supervisor.spec.required, timeoutMs / 1000);
  }

  laneStatuses(): LaneStatus[] {
    return [...this.lanes.values()].map((lane) => ({
      lane: lane.lane,
      required: lane.spec.required,
      state: lane.state,
      lastError: lane.lastError,
      lastErrorAt: lane.lastErrorAt === null ? null : new Date(lane.lastErrorAt).toISOString(),
      failedReason: lane.failedReason,
      restarts: lane.restartsTotal,
      actors: lane.spec.children.map((child) => {
        const slot = this.slots.get(child.name)!;
        return { name: child.name, running: slot.current !== null, ready: lane.isReady(child.name), startedAt: slot.current ? new Date(slot.current.startedAt).toISOString() : null };
      }),
    }));
  }

  laneCounters(): Array<{ lane: string; restarts: number; escalations: number; state: LaneState }> {
    return [...this.lanes.values()].map((l) => ({ lane: l.lane, restarts: l.restartsTotal, escalations: l.escalationsTotal, state: l.state }));
  }

  actorStats(): ActorStats[] {
    return [...this.slots.values()].map((slot) => {
      const control = new MailboxControl(slot.mailbox);
      return {
        name: slot.spec.name, lane: slot.supervisor.lane, mailboxDepth: control.depth, mailboxCapacity: control.capacity,
        handled: control.handled, heapUsedBytes: control.heapUsedBytes, heapTotalBytes: control.heapTotalBytes, externalBytes: control.externalBytes, running: slot.current !== null, oomKills: slot.oomKills,
      };
    });
  }

  /** Every running actor's own metrics registry, as prom-client JSON (for aggregation). */
  async collectActorMetrics(timeoutMs = 2000): Promise<unknown[]> {
    const running = [...this.slots.values()].filter((slot) => slot.current !== null);
    for (const slot of this.lastMetrics.keys()) if (slot.current === null) this.lastMetrics.delete(slot);
    const replies = running.map((slot) => new Promise<unknown>((resolve) => {
      const id = this.nextId++;
      const incarnation = slot.current;
      // A worker busy past the timeout is reported with its previous answer (same incarnation only):
      // leaving its series out would make Prometheus see its counters vanish and then reset.
      const timer = setTimeout(() => {
        this.metricsRequests.delete(id);
        const last = this.lastMetrics.get(slot);
        resolve(last !== undefined && last.incarnation === incarnation && incarnation === slot.current ? last.json : null);
      }, timeoutMs);
      this.metricsRequests.set(id, (json) => {
        clearTimeout(timer);
        if (incarnation === slot.current) this.lastMetrics.set(slot, { incarnation, json });
        resolve(json);
      });
      this.post(slot, { t: 'metrics', id });
    }));
    return (await Promise.all(replies)).filter((json) => json !== null);
  }

  /** `Inbox`: the receiver's inbox type, which the message is checked against (as ActorContext.send). */
  send<Inbox extends Message = AnyMessage>(to: string, message: NoInfer<Inbox>): Promise<void> {
    return this.rootLink(to).send([0, ROOT, message]);
  }

  ask<Inbox extends Message = AnyMessage, Reply = unknown>(to: string, message: NoInfer<Inbox>, timeoutMs = 30_000): Promise<Reply> {
    const askId = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.rootAsks.delete(askId);
        reject(new AskTimeoutError(to, message.type, timeoutMs));
      }, timeoutMs);
      this.rootAsks.set(askId, { to, resolve: resolve as (v: unknown) => void, reject, timer });
      this.rootLink(to).send([1, ROOT, askId, message]).catch((error: Error) => this.settleRootAsk(askId, false, toRemoteError(error)));
    });
  }

  /**
   * Stops lanes in the given order, then the lanes named in neither list together, then `last` in its order (lanes
   * that follow the others' work), each child within its shutdown budget.
   */
  async stop(order: readonly string[] = [], last: readonly string[] = []): Promise<void> {
    this.stopping = true;
    for (const timer of this.startTimers) clearTimeout(timer);
    this.startTimers.clear();
    const named = order.filter((lane) => this.lanes.has(lane));
    const after = last.filter((lane) => this.lanes.has(lane) && !named.includes(lane));
    const rest = [...this.lanes.keys()].filter((lane) => !named.includes(lane) && !after.includes(lane));
    for (const lane of named) await this.stopLanes([lane]);
    await this.stopLanes(rest);
    for (const lane of after) await this.stopLanes([lane]);
    for (const link of this.rootLinks.values()) link.fail('system stopped');
  }

  /**
   * Stops one lane while the system runs and removes it: each child gets `stop` (it finishes its open work within its
   * shutdown budget, then is terminated), messages still in its mailbox are dropped with the mailbox, asks waiting
   * on it fail with ActorExitedError, and afterwards its name is unknown (links to it are refused as for any
   * missing actor; a new lane may take the name). Resolves false when no such lane runs.
   */
  async stopLane(lane: string): Promise<boolean> {
    const supervisor = this.lanes.get(lane);
    if (!supervisor) return false;
    await this.stopLanes([lane]);
    for (const child of supervisor.spec.children) {
      const slot = this.slots.get(child.name);
      if (!slot) continue;
      this.failWaiting(slot, `lane '${lane}' was stopped`);
      new MailboxControl(slot.mailbox).close();
      this.lastMetrics.delete(slot);
      this.slots.delete(child.name);
      this.rootLinks.get(child.name)?.fail(`lane '${lane}' was stopped`);
      this.rootLinks.delete(child.name);
    }
    this.lanes.delete(lane);
    this.emit('lane-removed', lane);
    return true;
  }

  /** Crashes one actor on purpose (fault drills): it dies as on an uncaught error and its supervisor takes over. */
  kill(name: string, reason = 'killed by a fault drill'): Promise<void> {
    const slot = this.slots.get(name);
    if (!slot?.current) return Promise.reject(new Error(`actor '${name}' is not running`));
    const { worker } = slot.current;
    return new Promise((resolve) => {
      worker.once('exit', () => resolve());
      this.post(slot, { t: 'crash', reason });
    });
  }

  private async stopLanes(lanes: readonly string[]): Promise<void> {
    const stops: Promise<void>[] = [];
    for (const lane of lanes) {
      const supervisor = this.lanes.get(lane)!;
      supervisor.onStopped();
      for (const child of supervisor.spec.children) stops.push(this.stopChild(this.slots.get(child.name)!));
    }
    await Promise.all(stops);
  }

  private stopChild(slot: Slot): Promise<void> {
    if (slot.restartTimer) clearTimeout(slot.restartTimer);
    slot.restartTimer = null;
    this.failWaiting(slot, 'actor stopped');
    const incarnation = slot.current;
    if (!incarnation) return Promise.resolve();
    incarnation.stopRequested = true;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.options.log.warn('actor did not stop within its shutdown budget; terminating', { actor: slot.spec.name, shutdownMs: slot.spec.shutdownMs });
        void incarnation.worker.terminate();
      }, slot.spec.shutdownMs);
      incarnation.worker.once('exit', () => { clearTimeout(timer); resolve(); });
      this.post(slot, { t: 'stop' });
    });
  }

  private spawn(slot: Slot): void {
    const { spec } = slot;
    // The bundled host and actor together (they share the bundle's chunks), or neither.
    const bundled = bundledModule(spec.module);
    const bundledHost = bundled === null ? null : bundledModule(HOST);
    const worker = new Worker(bundledHost ?? HOST, {
      workerData: {
        name: spec.name, lane: slot.supervisor.lane, module: bundledHost === null ? spec.module : bundled, mailbox: slot.mailbox, args: spec.args,
        logLevel: this.options.logLevel, logRate: this.options.logRate, batching: this.options.batching ?? true, memoryMb: spec.memoryMb,
      },
      resourceLimits: {
        maxOldGenerationSizeMb: spec.memoryMb,
        maxYoungGenerationSizeMb: Math.max(4, Math.min(32, Math.floor(spec.memoryMb / 8))),
      },
      stdout: false,
      stderr: false,
    });
    const incarnation: Incarnation = { worker, startedAt: Date.now(), stopRequested: false, exitReason: null };
    slot.current = incarnation;
    worker.on('message', (message: FromWorker) => this.onWorkerMessage(slot, message));
    worker.on('error', (error: Error & { code?: string }) => {
      if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        if (incarnation.exitReason?.startsWith('out of memory')) return;
        incarnation.exitReason = `out of memory: exceeded its budget of ${spec.memoryMb} MB`;
      } else {
        incarnation.exitReason = `${error.name}: ${error.message}`;
      }
    });
    worker.on('exit', (code) => this.onExit(slot, incarnation, code));
    for (const requester of slot.waitingConnects.splice(0)) this.connect(requester, spec.name);
  }

  private onExit(slot: Slot, incarnation: Incarnation, code: number): void {
    if (slot.current !== incarnation) return;
    slot.current = null;
    if (incarnation.exitReason?.startsWith('out of memory')) slot.oomKills += 1;
    new MailboxControl(slot.mailbox).close();
    slot.mailbox = createMailboxBuffer(slot.spec.mailboxCapacity);
    for (const holder of slot.linkedFrom) {
      if (holder === ROOT) this.unlinkRoot(slot.spec.name);
      else this.postTo(holder, { t: 'unlink', to: slot.spec.name });
    }
    slot.linkedFrom = new Set();
    const requested = incarnation.stopRequested || this.stopping;
    const decision = slot.supervisor.onExit(slot.spec, code, incarnation.exitReason, requested, Date.now());
    if (decision.action === 'ignore') return;
    const fields = { actor: slot.spec.name, actorLane: slot.supervisor.lane, exitCode: code, reason: incarnation.exitReason };
    if (decision.action === 'escalate') {
      this.options.log.error('lane failed: restart intensity exceeded', { ...fields, detail: slot.supervisor.failedReason });
      this.failLane(slot.supervisor);
      this.emit('escalated', slot.supervisor.lane, slot.supervisor.failedReason);
      return;
    }
    this.options.log.warn('actor exited; restarting', { ...fields, attempt: decision.attempt, delayMs: decision.delayMs });
    this.emit('restarting', slot.spec.name, decision.attempt, decision.delayMs);
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = null;
      if (slot.supervisor.state !== 'failed' && !this.stopping) this.spawn(slot);
    }, decision.delayMs);
  }

  /** one_for_one escalation: the failed lane's other children stop too, and nobody can link to it any more. */
  private failLane(lane: LaneSupervisor): void {
    for (const child of lane.spec.children) {
      const slot = this.slots.get(child.name)!;
      if (slot.restartTimer) clearTimeout(slot.restartTimer);
      slot.restartTimer = null;
      this.failWaiting(slot, `lane '${lane.lane}' failed`);
      if (slot.current) {
        slot.current.stopRequested = true;
        this.post(slot, { t: 'stop' });
      }
    }
  }

  private failWaiting(slot: Slot, reason: string): void {
    for (const requester of slot.waitingConnects.splice(0)) {
      if (requester === ROOT) this.rootLinks.get(slot.spec.name)?.fail(reason);
      else this.postTo(requester, { t: 'link-failed', to: slot.spec.name, reason });
    }
  }

  private onWorkerMessage(slot: Slot, message: FromWorker): void {
    switch (message.t) {
      case 'connect':
        this.connect(slot.spec.name, message.to);
        return;
      case 'status':
        if (message.state === 'ready') slot.supervisor.onReady(slot.spec.name);
        else slot.supervisor.onDegraded(slot.spec.name, message.reason ?? 'degraded', Date.now());
        this.emit('status', slot.spec.name, message.state, message.reason);
        return;
      case 'metrics':
        this.metricsRequests.get(message.id)?.(message.json);
        this.metricsRequests.delete(message.id);
        return;
      case 'root':
        this.onRootEntry(slot, decode<WireEntry>(message.bytes));
        return;
      case 'task':
        void this.runTask(slot, message.id, message.name, message.input);
        return;
      case 'crashed':
        if (slot.current) {
          slot.current.exitReason = message.memoryBudget ? `out of memory: exceeded its budget of ${slot.spec.memoryMb} MB (${message.reason})` : message.reason;
        }
        return;
      case 'stopped':
        return;
    }
  }

  private onRootEntry(slot: Slot, entry: WireEntry): void {
    if (entry[0] === 2) return;
    const askId = entry[0] === 1 ? entry[2] : null;
    const message = entry[0] === 1 ? entry[3] : entry[2];
    const answer = (ok: boolean, value: unknown) => {
      if (askId !== null) this.post(slot, { t: 'root', bytes: encode([2, askId, ok, value] satisfies WireEntry) });
    };
    try {
      const result = this.rootHandler(message, entry[1]);
      if (result instanceof Promise) result.then((value) => answer(true, value), (error) => answer(false, toRemoteError(error)));
      else answer(true, result);
    } catch (error) {
      if (askId === null) this.options.log.error('root handler failed', { type: message.type, ...errorFields(error) });
      answer(false, toRemoteError(error));
    }
  }

  private async runTask(slot: Slot, id: number, name: string, input: unknown): Promise<void> {
    try {
      if (!this.options.pool) throw new Error('no task pool is configured');
      // The root only relays a task: the input it received (copied or transferred) and the result it gets back are
      // its own and unused after, so their buffers move on instead of being copied again.
      const value = await this.options.pool.run(name, input, ownedBuffers(input));
      this.post(slot, { t: 'task-done', id, ok: true, value }, ownedBuffers(value));
    } catch (error) {
      this.post(slot, { t: 'task-done', id, ok: false, value: toRemoteError(error) });
    }
  }

  private connect(requester: string, to: string): void {
    const target = this.slots.get(to);
    const refuse = (reason: string) => {
      if (requester === ROOT) this.rootLinks.get(to)?.fail(reason);
      else this.postTo(requester, { t: 'link-failed', to, reason });
    };
    if (!target) return refuse('no such actor');
    if (target.supervisor.state === 'failed') return refuse(`lane '${target.supervisor.lane}' failed`);
    if (target.supervisor.state === 'stopped' || this.stopping) return refuse('actor stopped');
    if (!target.current || !new MailboxControl(target.mailbox).isOpen()) {
      if (!target.waitingConnects.includes(requester)) target.waitingConnects.push(requester);
      return;
    }
    const channel = new MessageChannel();
    target.linkedFrom.add(requester);
    this.post(target, { t: 'inbound', from: requester, port: channel.port2 }, [channel.port2]);
    if (requester === ROOT) this.rootLinks.get(to)?.bind(channel.port1, target.mailbox);
    else this.postTo(requester, { t: 'link', to, port: channel.port1, mailbox: target.mailbox }, [channel.port1]);
  }

  private rootLink(to: string): Link {
    let link = this.rootLinks.get(to);
    if (!link) {
      link = new Link(to, this.options.batching ?? true, (askId, ok, value) => this.settleRootAsk(askId, ok, value), (target) => this.connect(ROOT, target));
      this.rootLinks.set(to, link);
    }
    return link;
  }

  private unlinkRoot(to: string): void {
    this.rootLinks.get(to)?.unbind();
    for (const [id, pending] of this.rootAsks) {
      if (pending.to !== to) continue;
      this.rootAsks.delete(id);
      clearTimeout(pending.timer);
      pending.reject(new ActorExitedError(to));
    }
  }

  private settleRootAsk(askId: number, ok: boolean, value: unknown): void {
    const pending = this.rootAsks.get(askId);
    if (!pending) return;
    this.rootAsks.delete(askId);
    clearTimeout(pending.timer);
    if (ok) pending.resolve(value);
    else pending.reject(fromRemoteError(value as RemoteError));
  }

  private post(slot: Slot, message: ToWorker, transfer: TransferListItem[] = []): void {
    slot.current?.worker.postMessage(message, transfer);
  }

  private postTo(name: string, message: ToWorker, transfer: TransferListItem[] = []): void {
    const slot = this.slots.get(name);
    if (slot) this.post(slot, message, transfer);
  }
}

/**
 * The ArrayBuffers a relayed task value holds (typed arrays' buffers and bare ArrayBuffers), a few levels deep: the
 * root owns them once it received the value, so they can be transferred onward. Shared memory is never transferred.
 */
function ownedBuffers(value: unknown): ArrayBuffer[] {
  const views: ArrayBufferView[] = [];
  const walk = (item: unknown, depth: number): void => {
    if (item instanceof ArrayBuffer) views.push(new Uint8Array(item));
    else if (ArrayBuffer.isView(item)) views.push(item);
    else if (depth < 3 && typeof item === 'object' && item !== null) for (const child of Array.isArray(item) ? item : Object.values(item)) walk(child, depth + 1);
  };
  walk(value, 0);
  return buffersOf(views);
}
