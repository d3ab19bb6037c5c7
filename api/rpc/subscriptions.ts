/**
 * WebSocket subscriptions (`eth_subscribe` `newHeads` and `logs`): the hub follows the chain journal
 * from the chain lane's notices — so an event leaves only after the live branch is committed — and
 * turns its moves into notifications: an `apply` sends the block's header to `newHeads` and its
 * matching logs to `logs`; an `undo` (the journal writes a reorg's undos before its applies) re-sends
 * the abandoned block's matching logs with `removed: true` before the replacement logs.
 *
 * Each connection's event channel is bounded: when the bytes queued for a client pass the limit (or
 * uWS would drop a message), the connection is closed with 1013 and the client must reconnect.
 */
import { randomBytes } from 'node:crypto';
import { decodeJournalMove } from '../../store/journal.js';
import { u64Key } from '../../store/keys.js';
import { bytesToHex } from '../../net/eth/hex.js';
import type { BlockView } from './block-view.js';
import type { ChainReader } from './chain-reader.js';
import { logMatches, parseLogCriteria, type LogFilter } from './logs-filter.js';
import { argumentError, expectParams } from './params.js';
import { renderBlockHeader } from './render-block.js';
import { asRemoved, blockLogs } from './render-receipt.js';
import { limitExceeded, RpcError, INVALID_PARAMS } from './rpc-errors.js';
import { journalHead } from '../../store/chain-heads.js';

/** Close code for a client that fell behind its event channel (RFC 6455 "try again later"). */
export const CLOSE_TRY_AGAIN_LATER = 1013;

/** What the hub needs of a connection (a uWS WebSocket behind it). */
export interface SubscriberSocket {
  /** Sends one text frame; returns false when the message could not be queued. */
  send(text: string): boolean;
  bufferedBytes(): number;
  close(code: number, reason: string): void;
}

interface Subscription {
  readonly id: string;
  readonly connection: Connection;
  readonly kind: 'newHeads' | 'logs';
  readonly filter?: LogFilter;
}

export interface Connection {
  readonly socket: SubscriberSocket;
  readonly subscriptions: Map<string, Subscription>;
  closed: boolean;
}

export interface HubSettings {
  readonly maxBufferedBytes: number;
  readonly maxSubscriptionsPerConnection: number;
  /** Publish moves after this journal sequence (default: the journal's head when the hub starts). */
  readonly afterSequence?: number;
}

export interface HubEvents {
  /** A connection was closed for falling behind. */
  onLagging?: (bufferedBytes: number) => void;
  /** Notifications written (for metrics). */
  onSent?: (count: number) => void;
  onProblem?: (message: string, fields: Record<string, unknown>) => void;
}

function newSubscriptionId(): string {
  return `0x${randomBytes(16).toString('hex')}`;
}

function notification(id: string, result: string): string {
  return `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":${result}}}`;
}

export class SubscriptionHub {
  private readonly newHeads = new Map<string, Subscription>();
  private readonly logs = new Map<string, Subscription>();
  /** The last journal sequence turned into events. */
  private sequence: number;

  constructor(private readonly chain: ChainReader, private readonly settings: HubSettings, private readonly events: HubEvents = {}) {
    this.sequence = settings.afterSequence ?? this.journalHead();
  }

  get subscriberCount(): number {
    return this.newHeads.size + this.logs.size;
  }

  openConnection(socket: SubscriberSocket): Connection {
    return { socket, subscriptions: new Map(), closed: false };
  }

  closeConnection(connection: Connection): void {
    connection.closed = true;
    for (const id of connection.subscriptions.keys()) {
      this.newHeads.delete(id);
      this.logs.delete(id);
    }
    connection.subscriptions.clear();
  }

  /** `eth_subscribe` on a connection: the new subscription id as a JSON string. */
  subscribe(connection: Connection, params: readonly unknown[]): string {
    expectParams(params, 1, 2);
    const kind = params[0];
    if (connection.subscriptions.size >= this.settings.maxSubscriptionsPerConnection) {
      throw limitExceeded(`a connection may hold at most ${this.settings.maxSubscriptionsPerConnection} subscriptions`, { limit: this.settings.maxSubscriptionsPerConnection });
    }
    let subscription: Subscription;
    if (kind === 'newHeads') {
      if (params.length > 1) throw argumentError(1, 'newHeads takes no parameters');
      subscription = { id: newSubscriptionId(), connection, kind: 'newHeads' };
      this.newHeads.set(subscription.id, subscription);
    } else if (kind === 'logs') {
      const raw = params[1] ?? {};
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw argumentError(1, 'expected a filter object');
      const filter = parseLogCriteria(raw as Record<string, unknown>, 1);
      subscription = { id: newSubscriptionId(), connection, kind: 'logs', filter };
      this.logs.set(subscription.id, subscription);
    } else {
      throw new RpcError(INVALID_PARAMS, `no "${String(kind)}" subscription in eth namespace`);
    }
    connection.subscriptions.set(subscription.id, subscription);
    return `"${subscription.id}"`;
  }

  unsubscribe(connection: Connection, params: readonly unknown[]): string {
    expectParams(params, 1, 1);
    const id = params[0];
    if (typeof id !== 'string') throw argumentError(0, 'expected a subscription id');
    // Only the connection that made a subscription may end it: another connection's id is just unknown here.
    if (!connection.subscriptions.delete(id)) return 'false';
    this.newHeads.delete(id);
    this.logs.delete(id);
    return 'true';
  }

  /** The chain journal grew to `sequence`: publish its moves since the last notice, in order. */
  onJournal(sequence: number): void {
    if (sequence <= this.sequence) return;
    const from = this.sequence + 1;
    this.sequence = sequence;
    if (this.subscriberCount === 0) return;
    // The chain lane committed on another thread: renew the read snapshot, which may predate it.
    this.chain.store.env.resetReadTxn();
    for (const { value } of this.chain.store.chain.journal.getRange({ start: u64Key(from), end: u64Key(sequence + 1) })) {
      const move = decodeJournalMove(value);
      if (move.op === 'finalize') continue;
      const view = this.chain.block(move.hash);
      if (!view) {
        this.events.onProblem?.('a journaled block is not recorded; its events are skipped', { block: move.number, hash: bytesToHex(move.hash) });
        continue;
      }
      if (move.op === 'apply') this.publishApply(view);
      else this.publishLogs(view, true);
    }
  }

  close(): void {
    for (const subscription of [...this.newHeads.values(), ...this.logs.values()]) this.closeConnection(subscription.connection);
  }

  private journalHead(): number {
    return journalHead(this.chain.store);
  }

  private publishApply(view: BlockView): void {
    if (this.newHeads.size > 0) {
      const header = renderBlockHeader(view);
      for (const subscription of [...this.newHeads.values()]) this.deliver(subscription, notification(subscription.id, header));
    }
    this.publishLogs(view, false);
  }

  private publishLogs(view: BlockView, removed: boolean): void {
    if (this.logs.size === 0) return;
    const rendered = blockLogs(view);
    const receipts = view.receipts;
    if (!rendered || !receipts) {
      this.events.onProblem?.('a block without recorded receipts: its logs cannot be published', { block: view.number, hash: view.hash });
      return;
    }
    for (const subscription of [...this.logs.values()]) {
      receipts.forEach((receipt, txIndex) => receipt.logs.forEach((log, i) => {
        if (subscription.connection.closed || !logMatches(log, subscription.filter!)) return;
        const json = rendered[txIndex]![i]!;
        this.deliver(subscription, notification(subscription.id, removed ? asRemoved(json) : json));
      }));
    }
  }

  private deliver(subscription: Subscription, text: string): void {
    const { connection } = subscription;
    if (connection.closed) return;
    const queued = connection.socket.send(text);
    const buffered = connection.socket.bufferedBytes();
    if (!queued || buffered > this.settings.maxBufferedBytes) {
      this.events.onLagging?.(buffered);
      connection.socket.close(CLOSE_TRY_AGAIN_LATER, 'event channel full: reconnect');
      this.closeConnection(connection);
      return;
    }
    this.events.onSent?.(1);
  }
}
