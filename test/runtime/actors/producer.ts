/** Test actor. Accepts: `produce {to, count}` (ask; sends `item` messages as fast as credit allows and reports how often it had to wait). */
import { defineActor, type AnyMessage } from '../../../runtime/actor.js';

export default defineActor<null>({
  init(ctx) {
    ctx.ready();
    return null;
  },
  async handle(message, _state, ctx) {
    if (message.type !== 'produce') throw new Error(`unknown message ${message.type}`);
    const to = message.to as string;
    const count = message.count as number;
    let waited = 0;
    for (let seq = 0; seq < count; seq += 1) {
      const started = performance.now();
      await ctx.send<AnyMessage>(to, { type: 'item', sender: ctx.name, seq });
      if (performance.now() - started > 2) waited += 1;
    }
    return { sent: count, waited };
  },
});
