import type { Registry } from 'prom-client';
import type { Logger } from './log.js';
import type { Message } from './protocol.js';

export type { Message } from './protocol.js';

/** What an actor can do: talk to other actors, report its health, log, count, and run CPU tasks on the shared pool. */
export interface ActorContext<Args = unknown> {
  readonly name: string;
  readonly lane: string;
  readonly args: Args;
  readonly log: Logger;
  /** This actor's own metrics; the root aggregates every actor's registry into /metrics. */
  readonly metrics: Registry;
  /** Waits for a slot in the receiver's bounded mailbox (back-pressure); never drops. */
  send(to: string, message: Message): Promise<void>;
  /** Sends and waits for the receiver's handler result. */
  ask<Reply = unknown>(to: string, message: Message, timeoutMs?: number): Promise<Reply>;
  /**
   * Runs a named CPU task on the node's piscina pool. `transfer`: views of `input` whose buffers are handed over
   * instead of copied (detached here once sent); buffers in the result come back the same way.
   */
  runTask<Result = unknown>(task: string, input: unknown, transfer?: readonly ArrayBufferView[]): Promise<Result>;
  ready(): void;
  degraded(reason: string): void;
}

/**
 * An actor's behaviour. `handle` runs for one message at a time, in arrival order; its return
 * value answers an `ask`. A thrown CodedError answers the asker with that error and the actor goes
 * on; any other exception crashes the actor, and its supervisor restarts it.
 */
export interface ActorDefinition<State, Args = unknown> {
  init(ctx: ActorContext<Args>): State | Promise<State>;
  handle(message: Message, state: State, ctx: ActorContext<Args>, from: string): unknown;
  /** Graceful stop: finish open work (e.g. close listen sockets, commit the open transaction). */
  stop?(state: State, ctx: ActorContext<Args>): void | Promise<void>;
  /**
   * Last breath before a crash, synchronous: release native resources that must not outlive the
   * worker (a uWS socket left open aborts the whole process when the worker's loop closes).
   */
  abort?(state: State): void;
}

export function defineActor<State, Args = unknown>(definition: ActorDefinition<State, Args>): ActorDefinition<State, Args> {
  return definition;
}
