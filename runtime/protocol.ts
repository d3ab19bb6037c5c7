import type { MessagePort } from 'node:worker_threads';
import type { MailboxBuffer } from './mailbox.js';

/**
 * Every actor message is a plain object with a string `type` tag; each lane declares the ones it accepts as a union in
 * its messages.ts (the wire carries them as they are, msgpackr-encoded, unchecked).
 */
export interface Message {
  readonly type: string;
}

/** A message of no declared inbox (the runtime's own tests and benchmarks): any fields, each `unknown`. */
export interface AnyMessage extends Message {
  readonly [field: string]: unknown;
}

/** Name of the root actor (the main thread): lanes report to it and may ask it things. */
export const ROOT = 'node';

/** Entries on an actor-to-actor port, msgpackr-encoded in batches. */
export type WireEntry =
  | readonly [kind: 0, from: string, message: Message]
  | readonly [kind: 1, from: string, askId: number, message: Message]
  | readonly [kind: 2, askId: number, ok: boolean, value: unknown];

export interface RemoteError {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
  readonly details?: Record<string, unknown>;
}

/** What a worker is booted with. */
export interface WorkerBoot {
  readonly name: string;
  readonly lane: string;
  readonly module: string;
  readonly mailbox: MailboxBuffer;
  readonly args: unknown;
  readonly logLevel: string;
  readonly logRate: number;
  readonly batching: boolean;
  /** The worker's V8 heap budget; the worker stops itself cleanly before V8's hard limit kills it. */
  readonly memoryMb: number;
}

/** Control messages, root → worker (structured clone, ports transferred). */
export type ToWorker =
  | { readonly t: 'link'; readonly to: string; readonly port: MessagePort; readonly mailbox: MailboxBuffer }
  | { readonly t: 'link-failed'; readonly to: string; readonly reason: string }
  | { readonly t: 'unlink'; readonly to: string }
  | { readonly t: 'inbound'; readonly from: string; readonly port: MessagePort }
  | { readonly t: 'stop' }
  | { readonly t: 'crash'; readonly reason: string }
  | { readonly t: 'metrics'; readonly id: number }
  | { readonly t: 'root'; readonly bytes: Uint8Array }
  | { readonly t: 'task-done'; readonly id: number; readonly ok: boolean; readonly value: unknown };

/** Control messages, worker → root. */
export type FromWorker =
  | { readonly t: 'connect'; readonly to: string }
  | { readonly t: 'status'; readonly state: 'ready' | 'degraded'; readonly reason?: string }
  | { readonly t: 'metrics'; readonly id: number; readonly json: unknown }
  | { readonly t: 'root'; readonly bytes: Uint8Array }
  | { readonly t: 'task'; readonly id: number; readonly name: string; readonly input: unknown }
  | { readonly t: 'crashed'; readonly reason: string; readonly memoryBudget: boolean }
  | { readonly t: 'stopped' };
