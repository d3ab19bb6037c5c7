/**
 * Lane `source`, kind `none`: no live source. The node serves what its store already holds — a chain loaded with
 * `chain-node import` — and follows nothing. On start it announces the stored canonical head to `chain` (a no-op
 * for the journal when the chain lane already has it) and is ready at once.
 *
 * Accepts SourceInbox (messages.ts): ask `finalized` → `{ number, hash } | null`, the last `finalize` move recorded in the chain journal
 *          (finality kind `none`: what the import finalized).
 * Sends to `chain`: `head { number, hash }` (HeadNotice, actors/chain/messages.ts) once at start when the store has a canonical chain.
 */
import { defineActor } from '../../runtime/actor.js';
import { CodedError } from '../../runtime/errors.js';
import { openStore, type Store } from '../../store/store.js';
import type { ChainInbox, HeadNotice } from '../chain/messages.js';
import type { SourceInbox } from './messages.js';
import { canonicalHead, journalFinalized } from '../../store/chain-heads.js';

export interface NoneSourceArgs {
  readonly dataDir: string;
}

interface State {
  readonly store: Store;
}


export default defineActor<State, NoneSourceArgs, SourceInbox>({
  async init(ctx) {
    const store = openStore({ dataDir: ctx.args.dataDir });
    const tip = canonicalHead(store);
    const head: HeadNotice | null = tip === null ? null : { type: 'head', number: tip.number, hash: tip.hash };
    if (head) await ctx.send<ChainInbox>('chain', head);
    ctx.log.info('no live source: serving the stored chain', { head: head?.number ?? null });
    ctx.ready();
    return { store };
  },

  handle(message, state) {
    if (message.type !== 'finalized') throw new CodedError('invalid_request', `the none source does not accept '${message.type}'; it answers ask 'finalized'`);
    return journalFinalized(state.store);
  },

  async stop(state) {
    await state.store.close();
  },
});
