/** Test actor. Accepts: `grow` (allocates without bound until its V8 heap budget kills it), `ping` (ask → 'pong'), `task {n}` (ask → runs the pool task `square`), `transfer {size}` (a buffer to the pool and back, transferred). */
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
      case 'transfer': {
        // `size` bytes 0, 1, 2, … sent transferred: detached here once sent; the reversed bytes come back.
        const bytes = Uint8Array.from({ length: message.size as number }, (_, i) => i % 251);
        const pending = ctx.runTask<{ reversed: Uint8Array; received: number }>('reverseBytes', { bytes }, [bytes]);
        const detachedOnSend = bytes.byteLength === 0;
        const { reversed, received } = await pending;
        const expected = Uint8Array.from({ length: message.size as number }, (_, i) => i % 251).reverse();
        return { detachedOnSend, received, intact: Buffer.from(reversed).equals(Buffer.from(expected)) };
      }
      default:
        throw new Error(`unknown message ${message.type}`);
    }
  },
});
