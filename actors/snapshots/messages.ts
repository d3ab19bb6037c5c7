/**
 * The `snapshots` lane's inbox (actors/snapshots/actor.ts), and the replies to its asks; listeners ask through client.ts.
 */
import type { CreateSnapshotRequest, SnapshotSummary } from '../../api/aggregate/entities/snapshot-service.js';

export type CreateSnapshot = CreateSnapshotRequest & { readonly type: 'create' };
export type ReleaseSnapshot = { readonly type: 'release'; readonly processor: string; readonly snapshot: string };

export type SnapshotsInbox = CreateSnapshot | ReleaseSnapshot;

export interface SnapshotsReplies {
  readonly create: SnapshotSummary;
  readonly release: { readonly released: true };
}
