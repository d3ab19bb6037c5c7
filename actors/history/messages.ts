/**
 * The `history` lane's inbox (actors/history/actor.ts), and the replies to its asks.
 *
 *   listeners → history   asks `job.*`, `probe`, `subscription.*`, `rebuild.*`: HistoryAdminRequest, declared with the
 *                         admin routes that build them (api/admin/history-requests.ts; the API may not import lanes)
 *   rpc       → history   `rpc.fill`, `rpc.locate` (on-demand.ts), answered later by `history.filled` (actors/rpc/messages.ts)
 *   processor → history   `backfill.wake` (a processor planned a cold backfill)
 */
import type { ProbeResult } from './sources.js';
import type { RebuildDeletion } from '../../store/rebuilds.js';
import type { RebuildView } from './rebuilds.js';
import type { SubscriptionView } from './subscriptions.js';
import type { HistoryAdminRequest } from '../../api/admin/history-requests.js';
import type { FillMessage, LocateMessage } from './on-demand.js';
import type { JobView } from './actor.js';

export type { FillMessage, LocateMessage } from './on-demand.js';
export type { CreateJobRequest, CreateRebuildRequest, CreateSubscriptionRequest, HistoryAdminRequest } from '../../api/admin/history-requests.js';

/** A processor planned a cold backfill: the lane looks for its job now rather than at its next scan. */
export type BackfillWake = { readonly type: 'backfill.wake'; readonly processor: string };

export type HistoryInbox = HistoryAdminRequest | FillMessage | LocateMessage | BackfillWake;

export interface HistoryReplies {
  readonly 'job.create': { readonly created: boolean; readonly job: JobView };
  readonly 'job.list': { readonly data: JobView[] };
  readonly 'job.get': JobView;
  readonly 'job.cancel': JobView;
  readonly 'job.delete': { readonly deleted: string };
  readonly probe: ProbeResult;
  readonly 'subscription.create': { readonly created: boolean; readonly subscription: SubscriptionView };
  readonly 'subscription.list': { readonly data: SubscriptionView[] };
  readonly 'subscription.get': SubscriptionView;
  readonly 'subscription.cancel': SubscriptionView;
  readonly 'subscription.delete': { readonly deleted: string };
  readonly 'rebuild.create': { readonly created: boolean; readonly rebuild: RebuildView };
  readonly 'rebuild.list': { readonly data: RebuildView[] };
  readonly 'rebuild.get': RebuildView;
  readonly 'rebuild.promote': RebuildView;
  readonly 'rebuild.rollback': RebuildView;
  readonly 'rebuild.cancel': RebuildView;
  readonly 'rebuild.delete': RebuildDeletion;
}
