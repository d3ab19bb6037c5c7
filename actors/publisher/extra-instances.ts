/**
 * The change logs the publisher finds in the store besides the configured instances (issue 30 point 1; the store is
 * read every second, so work the node starts later is published too):
 *
 * - each rebuild's replacement instance (`<instance>~r<n>`) on its own subject, from the first change — the stream
 *   then holds it before a promote makes it the processor's serving instance, and the processor id's descriptor
 *   names it from the promote on (relays follow the descriptor);
 * - each backfill subscription's stream (`bs~…`), on `<prefix>.<stream>`: readers of the subscription follow that
 *   subject (relays serve processors' feeds, not subscription streams).
 *
 * A cancelled rebuild's replacement is left out (its tables go with it).
 */
import { listSubscriptions } from '../../store/backfill-subscriptions.js';
import { listRebuilds, servingInstance } from '../../store/rebuilds.js';
import type { Store } from '../../store/store.js';

export interface ExtraInstance {
  readonly instance: string;
  readonly kind: 'replacement' | 'subscription';
  /** The processor id it belongs to. */
  readonly processor: string;
}

export function extraInstances(store: Store): ExtraInstance[] {
  const replacements = listRebuilds(store).filter((r) => r.state !== 'cancelled').map((r): ExtraInstance => ({ instance: r.instance, kind: 'replacement', processor: r.processor }));
  const streams = listSubscriptions(store).map((s): ExtraInstance => ({ instance: s.stream, kind: 'subscription', processor: s.processor }));
  return [...replacements, ...streams];
}

/** The instance serving processor `id` now: a promote's or rollback's choice, else the configured one. */
export function servedInstance(store: Store, id: string, configured: string): string {
  return servingInstance(store, id) ?? configured;
}
