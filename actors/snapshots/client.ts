/**
 * The listener's side of the `snapshots` lane: asks over the actor mailbox. A snapshot of up to
 * `snapshots.max_rows` rows is materialized in one transaction, so the ask waits generously; a lane
 * that is down answers 503 (retryable), an open-snapshot budget that is spent 429.
 */
import type { ActorContext } from '../../runtime/actor.js';
import { CodedError } from '../../runtime/errors.js';
import { HttpError } from '../../api/errors.js';
import type { SnapshotService } from '../../api/aggregate/entities/snapshot-service.js';
import type { SnapshotsInbox, SnapshotsReplies } from './messages.js';

const CREATE_TIMEOUT_MS = 120_000;
const RELEASE_TIMEOUT_MS = 30_000;

function mapError(error: unknown): never {
  if (error instanceof CodedError) {
    if (error.code === 'query_too_expensive' && error.details?.maxActive !== undefined) throw new HttpError(error.code, error.message, error.details, 429);
    throw error;
  }
  throw new HttpError('not_ready', `the snapshot lane did not answer: ${(error as Error).message}`);
}

export function snapshotService(ctx: ActorContext): SnapshotService {
  return {
    create: (request) => ctx.ask<SnapshotsInbox, SnapshotsReplies['create']>('snapshots', { type: 'create', ...request }, CREATE_TIMEOUT_MS).catch(mapError),
    release: async (processor, snapshot) => {
      await ctx.ask<SnapshotsInbox>('snapshots', { type: 'release', processor, snapshot }, RELEASE_TIMEOUT_MS).catch(mapError);
    },
  };
}
