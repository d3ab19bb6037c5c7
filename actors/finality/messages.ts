/**
 * The `finality` lane's inbox (actors/finality/actor.ts): empty. The lane polls the live source (ask `finalized`,
 * actors/sources/messages.ts) or its own Beacon API endpoints, and sends FinalizedNotice to `chain`
 * (actors/chain/messages.ts).
 */
export type FinalityInbox = never;
