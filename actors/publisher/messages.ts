/**
 * The `publisher` lane's inbox (actors/publisher/actor.ts): notices only, it answers no ask.
 *
 *   processor → publisher   ChangesNotice   a processor's change log grew to `sequence` (inclusive): publish up to it
 */
import type { ChangesNotice } from '../listener/messages.js';

export type { ChangesNotice } from '../listener/messages.js';

export type PublisherInbox = ChangesNotice;
