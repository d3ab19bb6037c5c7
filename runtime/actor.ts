import type { Registry } from 'prom-client';
import type { Logger } from './log.js';
import type { AnyMessage, Message } from './protocol.js';

export type { AnyMessage, Message } from './protocol.js';

/**
 * What an actor can do: talk to other actors, report its health, log, count, and run CPU tasks on the shared pool.
 * `send` and `ask` name the receiver's inbox type (its lane's messages.ts), so the compiler checks the message where
 * it is made: `ctx.send<ChainInbox>('chain', notice)`; without it the message does not compile.
 */
export interface ActorContext<Args = unknown> {
  readonly name: string;
  readonly lane: string;
  readonly args: Args;
  readonly log: Logger;
  /** This actor's own metrics; the root aggregates every actor's registry into /metrics. */
  readonly metrics: Registry;
  /** Waits for a slot in the receiver's bounded mailbox (back-pressure); never drops. */
  send<Inbox extends Message = never>(to: string, message: NoInfer<Inbox>): Promise<void>;
  /** Sends and waits for the receiver's handler result (its lane's messages.ts names the reply). */
  ask<Inbox extends Message = never, Reply = unknown>(to: string, message: NoInfer<Inbox>, timeoutMs?: number): Promise<Reply>;
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
 * on; any other exception crashes the actor, and its supervisor restarts it. `Inbox` is the union of
 * the messages the actor accepts (its lane's messages.ts); `handle` narrows it with `switch (message.type)`.
 */
export interface ActorDefinition<State, Args = unknown, Inbox extends Message = AnyMessage> {
  init(ctx: ActorContext<Args>): State | Promise<State>;
  handle(message: Inbox, state: State, ctx: ActorContext<Args>, from: string): unknown;
  /** Graceful stop: finish open work (e.g. close listen sockets, commit the open transaction). */
  stop?(state: State, ctx: ActorContext<Args>): void | Promise<void>;
  /**
   * Last breath before a crash, synchronous: release native resources that must not outlive the
   * worker (a uWS socket left open aborts the whole process when the worker's loop closes).
   */
  abort?(state: State): void;
}

export function defineActor<State, Args = unknown, Inbox extends Message = AnyMessage>(definition: ActorDefinition<State, Args, Inbox>): ActorDefinition<State, Args, Inbox> {
  return definition;
}

/**
 * The tag of a message outside an actor's inbox, for the error of a handler's `default:` branch: the compiler proves
 * no actor sends one (`message` is `never` there), yet a peer on the wire may.
 */
export function unknownTag(message: never): string {
  return (message as Message).type;
}
