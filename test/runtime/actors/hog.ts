/** Test actor. Accepts: `grow` (allocates without bound until its V8 heap budget kills it), `ping` (ask → 'pong'), `task {n}` (ask → runs the pool task `square`). */
import { defineActor } from '../../../runtime/actor.js';

const hoard: unknown[] = [];

export default defineActor<null>({
  init(ctx) {
    ctx.ready();
    return null;
  },
  async handle(message, _state, ctx) {
    switch (message.type) {
      case 'grow':
        setImmediate(function allocate() {
          for (let i = 0; i < 1000; i += 1) hoard.push(new Array(1000).fill(i));
          setImmediate(allocate);
        });
        return 'growing';
      case 'ping':
        return 'pong';
      case 'task':
        return ctx.runTask('square', message.n);
      default:
        throw new Error(`unknown message ${message.type}`);
    }
  },
});
