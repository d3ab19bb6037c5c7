/**
 * Lane `outbox`: the one writer of durable consumer records (store/consumers.ts) — creation,
 * deletion, leases and the delivered/acknowledged watermarks. Listeners read records and change
 * bytes straight from LMDB and ask this lane for every change to a record, so two listener
 * workers can never race on one consumer's watermarks. Each ask is one LMDB write transaction,
 * committed before the answer (a watermark the client was told about survives kill -9).
 *
 * Accepts (asks, from listeners): `consumer.create`, `consumer.delete`, `consumer.lease`,
 * `consumer.deliver`, `consumer.ack` (see messages.ts). Sends nothing.
 */
import { Counter } from 'prom-client';
import { defineActor } from '../../runtime/actor.js';
import { openStore } from '../../store/env.js';
import { acknowledge, createConsumer, deleteConsumer, deliverChanges, renewLease, type OutboxStore } from './consumer-writes.js';
import type { OutboxMessage } from './messages.js';

export interface OutboxArgs {
  readonly dataDir: string;
  /** The chain this node serves (cursors name it). */
  readonly chainId: number;
}

interface State {
  readonly out: OutboxStore;
  readonly writes: Counter;
}

export default defineActor<State, OutboxArgs>({
  init(ctx) {
    const store = openStore({ dataDir: ctx.args.dataDir });
    const writes = new Counter({ name: 'chain_node_outbox_consumer_calls_total', help: 'Consumer record operations handled by the outbox, by operation', labelNames: ['operation'], registers: [ctx.metrics] });
    ctx.ready();
    return { out: { store, chainId: ctx.args.chainId }, writes };
  },
  handle(raw, state) {
    const message = raw as OutboxMessage;
    const now = Date.now();
    state.writes.inc({ operation: message.type });
    switch (message.type) {
      case 'consumer.create':
        return createConsumer(state.out, message, now);
      case 'consumer.delete':
        return deleteConsumer(state.out, message);
      case 'consumer.lease':
        return renewLease(state.out, message, now);
      case 'consumer.deliver':
        return deliverChanges(state.out, message, now);
      case 'consumer.ack':
        return acknowledge(state.out, message, now);
      default:
        throw new Error(`outbox does not accept '${(raw as { type: string }).type}'`);
    }
  },
  async stop(state) {
    await state.out.store.close();
  },
});
