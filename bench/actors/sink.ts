/** Bench actor. Accepts: `tick {n}` (counts), ask `await-count {total}` → resolves once that many ticks were handled, ask `echo {value}` → value. */
import { defineActor } from '../../runtime/actor.js';

interface State {
  count: number;
  waiters: Array<{ total: number; resolve: (count: number) => void }>;
}

export default defineActor<State>({
  init(ctx) {
    ctx.ready();
    return { count: 0, waiters: [] };
  },
  handle(message, state) {
    switch (message.type) {
      case 'tick':
        state.count += 1;
        if (state.waiters.length > 0) {
          state.waiters = state.waiters.filter((w) => (w.total <= state.count ? (w.resolve(state.count), false) : true));
        }
        return undefined;
      case 'await-count': {
        const total = message.total as number;
        if (state.count >= total) return state.count;
        return new Promise<number>((resolve) => state.waiters.push({ total, resolve }));
      }
      case 'echo':
        return message.value;
      default:
        throw new Error(`sink does not accept '${message.type}'`);
    }
  },
});
