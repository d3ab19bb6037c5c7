/**
 * Lane `finality`: follows the finalized block of the configured finality backend and tells the
 * chain lane. Backends `devnet` (the devnet's own finality), `rpc` (the upstream's `finalized`
 * tag) and `none` (the finalized block the store records, from an import) are all answered by the
 * live source actor, which owns the connection or the store; this lane polls it.
 *
 * Accepts: nothing. Asks `source`: `finalized` → {number, hash} | null. Sends: FinalizedNotice to `chain`.
 */
import { defineActor, type ActorContext } from '../runtime/actor.js';
import { errorFields } from '../runtime/log.js';
import type { FinalizedNotice } from './chain-messages.js';
import type { Hex } from '../net/eth/hex.js';

export interface FinalityArgs {
  readonly kind: 'devnet' | 'rpc' | 'none';
  readonly pollIntervalMs: number;
}

interface State {
  timer: NodeJS.Timeout | null;
  last: { number: number; hash: Hex } | null;
  polling: boolean;
  healthy: boolean | null;
}

async function poll(ctx: ActorContext<FinalityArgs>, state: State): Promise<void> {
  if (state.polling) return;
  state.polling = true;
  try {
    const finalized = await ctx.ask<{ number: number; hash: Hex } | null>('source', { type: 'finalized' }, Math.max(5000, ctx.args.pollIntervalMs));
    if (finalized === null) {
      if (state.healthy !== false) ctx.degraded(`the ${ctx.args.kind} finality backend reports no finalized block`);
      state.healthy = false;
      return;
    }
    if (state.healthy !== true) ctx.ready();
    state.healthy = true;
    if (state.last?.number === finalized.number && state.last.hash === finalized.hash) return;
    state.last = finalized;
    const notice: FinalizedNotice = { type: 'finalized', number: finalized.number, hash: finalized.hash };
    await ctx.send('chain', notice);
  } catch (error) {
    if (state.healthy !== false) {
      ctx.log.warn('finality backend unavailable', errorFields(error));
      ctx.degraded(`finality backend unavailable: ${(error as Error).message}`);
    }
    state.healthy = false;
  } finally {
    state.polling = false;
  }
}

export default defineActor<State, FinalityArgs>({
  init(ctx) {
    const state: State = { timer: null, last: null, polling: false, healthy: null };
    state.timer = setInterval(() => void poll(ctx, state), ctx.args.pollIntervalMs);
    void poll(ctx, state);
    return state;
  },
  handle(message) {
    throw new Error(`finality does not accept '${message.type}'`);
  },
  stop(state) {
    if (state.timer) clearInterval(state.timer);
  },
});
