/**
 * The `listener` lane's inbox (actors/listener/actor.ts): notices only, it answers no ask.
 *
 *   processor → listener   ChangesNotice       a processor's change log grew to `sequence` (inclusive)
 *   node      → listener   LaneTroublesNotice  which processors are degraded or failed by lane trouble, on every change
 *   publisher → listener   PublicationNotice   JetStream publication per processor (about every second; `/v1/status`, `/debug/network`)
 */
import type { PublicationStatus } from '../../api/aggregate/publication-status.js';

export type ChangesNotice = {
  readonly type: 'changes';
  readonly processor: string;
  readonly sequence: number;
  /** When the commit that made `sequence` durable completed: ms since the epoch (sub-ms precision). */
  readonly committedAt: number;
};

export type LaneTroublesNotice = {
  readonly type: 'lanes';
  readonly troubles: Readonly<Record<string, { readonly state: 'degraded' | 'failed'; readonly reason: string }>>;
};

export type PublicationNotice = { readonly type: 'publication' } & PublicationStatus;

export type ListenerInbox = ChangesNotice | LaneTroublesNotice | PublicationNotice;
