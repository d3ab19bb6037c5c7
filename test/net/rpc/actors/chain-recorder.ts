/**
 * Test actor standing in for the `chain` lane. Accepts: `head {number, hash}` (HeadNotice, recorded in order);
 * ask `heads` → every HeadNotice received so far.
 */
import { defineActor } from '../../../../runtime/actor.js';
import type { HeadNotice } from '../../../../actors/chain/messages.js';

interface State {
  readonly heads: HeadNotice[];
}

export default defineActor<State>({
  init(ctx) {
    ctx.ready();
    return { heads: [] };
  },
  handle(message, state) {
    switch (message.type) {
      case 'head':
        state.heads.push({ type: 'head', number: message.number as number, hash: message.hash as HeadNotice['hash'] });
        return undefined;
      case 'heads':
        return state.heads;
      default:
        throw new Error(`chain-recorder does not accept '${message.type}'`);
    }
  },
});
