/** Test actor. Accepts: `item {sender, seq}` (counts in `test_items_total`, checks per-sender order), `slow {ms}` (changes per-message delay), `block {ms}` (blocks its thread), `count` (ask → totals), `crash`, `echo {value}`, `fail-coded`. */
import { Counter } from 'prom-client';
import { defineActor } from '../../../runtime/actor.js';
import { CodedError } from '../../../runtime/errors.js';

interface State {
  delayMs: number;
  total: number;
  lastSeq: Map<string, number>;
  outOfOrder: number;
  items: Counter;
}

export default defineActor<State>({
  init(ctx) {
    ctx.ready();
    const items = new Counter({ name: 'test_items_total', help: 'items handled', registers: [ctx.metrics] });
    return { delayMs: 0, total: 0, lastSeq: new Map(), outOfOrder: 0, items };
  },
  async handle(message, state) {
    switch (message.type) {
      case 'item': {
        const sender = message.sender as string;
        const seq = message.seq as number;
        const previous = state.lastSeq.get(sender) ?? -1;
        if (seq !== previous + 1) state.outOfOrder += 1;
        state.lastSeq.set(sender, seq);
        state.total += 1;
        state.items.inc();
        if (state.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
        return undefined;
      }
      case 'block':
        // Synchronously, so the thread answers nothing else meanwhile (not even a metrics scrape).
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, message.ms as number);
        return undefined;
      case 'slow':
        state.delayMs = message.ms as number;
        return undefined;
      case 'count':
        return { total: state.total, outOfOrder: state.outOfOrder, senders: Object.fromEntries(state.lastSeq) };
      case 'echo':
        return message.value;
      case 'fail-coded':
        throw new CodedError('invalid_request', 'coded failure on purpose', { why: 'test' });
      case 'crash':
        throw new Error('crash on purpose');
      default:
        throw new Error(`unknown message ${message.type}`);
    }
  },
});
