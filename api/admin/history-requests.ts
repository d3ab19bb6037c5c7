/**
 * The admin routes' requests of the `history` lane (admin-routes.ts builds them from validated bodies; the lane's
 * inbox, actors/history/messages.ts, is these and the messages other lanes send it). Types only: they travel as
 * plain objects over the lane's mailbox.
 */
import type { ConsumerRole } from '../../store/consumers.js';
import type { SubscriptionMode } from '../../store/backfill-subscriptions.js';

/** A materialization job over finalized blocks missing from a processor's coverage. */
export interface CreateJobRequest {
  readonly processor: string;
  readonly fromBlock: number;
  readonly toBlock: number;
  readonly mode: 'fill_missing';
  readonly idempotencyKey: string;
  readonly source?: string;
}

/** A backfill subscription: a job's fields, its mode, and the consumer it creates. */
export interface CreateSubscriptionRequest {
  readonly processor: string;
  readonly fromBlock: number;
  readonly toBlock: number;
  readonly mode: SubscriptionMode;
  readonly idempotencyKey: string;
  readonly source?: string;
  readonly consumer: { readonly id: string; readonly role: ConsumerRole; readonly leaseTtlSeconds: number };
  /** The consumer's secret (the route generates one when the body has none); hashed by the lane, never stored. */
  readonly credential: string;
}

/** A processor rebuild: a replacement instance cold-backfilled beside the serving one. */
export interface CreateRebuildRequest {
  readonly processor: string;
  readonly idempotencyKey: string;
  readonly source?: string;
}

type ById<Type extends string> = { readonly type: Type; readonly id: string };
type RebuildById<Type extends string> = { readonly type: Type; readonly processor: string; readonly id: string };

export type JobCreate = CreateJobRequest & { readonly type: 'job.create' };
export type JobList = { readonly type: 'job.list' };
export type JobGet = ById<'job.get'>;
export type JobCancel = ById<'job.cancel'>;
export type JobDelete = ById<'job.delete'>;
export type Probe = { readonly type: 'probe'; readonly source: string };

export type SubscriptionCreate = CreateSubscriptionRequest & { readonly type: 'subscription.create' };
export type SubscriptionList = { readonly type: 'subscription.list' };
export type SubscriptionGet = ById<'subscription.get'>;
export type SubscriptionCancel = ById<'subscription.cancel'>;
export type SubscriptionDelete = ById<'subscription.delete'>;

export type RebuildCreate = CreateRebuildRequest & { readonly type: 'rebuild.create' };
export type RebuildList = { readonly type: 'rebuild.list'; readonly processor: string };
export type RebuildGet = RebuildById<'rebuild.get'>;
export type RebuildPromote = RebuildById<'rebuild.promote'> & { readonly acceptDifferences?: boolean };
export type RebuildRollback = RebuildById<'rebuild.rollback'>;
export type RebuildCancel = RebuildById<'rebuild.cancel'>;
export type RebuildDelete = RebuildById<'rebuild.delete'>;

export type HistoryAdminRequest =
  | JobCreate | JobList | JobGet | JobCancel | JobDelete | Probe
  | SubscriptionCreate | SubscriptionList | SubscriptionGet | SubscriptionCancel | SubscriptionDelete
  | RebuildCreate | RebuildList | RebuildGet | RebuildPromote | RebuildRollback | RebuildCancel | RebuildDelete;
