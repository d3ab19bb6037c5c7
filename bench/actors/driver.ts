/**
 * Bench actor that drives load at another actor from inside a worker, as lanes do.
 * Accepts: ask `flood {to, count}` → {seconds}; ask `round-trips {to, count}` → latencies in µs.
 */
import { defineActor, type AnyMessage } from '../../runtime/actor.js';

export default defineActor<null>({
  init(ctx) {
    ctx.ready();
    return null;
  },
  async handle(message, _state, ctx) {
    const to = message.to as string;
    const count = message.count as number;
    if (message.type === 'flood') {
      const started = performance.now();
      for (let n = 0; n < count; n += 1) await ctx.send<AnyMessage>(to, { type: 'tick', n });
      await ctx.ask<AnyMessage>(to, { type: 'await-count', total: count }, 120_000);
      return { seconds: (performance.now() - started) / 1000 };
    }
    if (message.type === 'round-trips') {
      const latencies: number[] = [];
      for (let n = 0; n < count; n += 1) {
        const started = performance.now();
        await ctx.ask<AnyMessage>(to, { type: 'echo', value: n });
        latencies.push((performance.now() - started) * 1000);
      }
      return latencies;
    }
    throw new Error(`driver does not accept '${message.type}'`);
  },
});
