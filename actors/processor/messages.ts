/**
 * The inbox of a `processor.<id>` lane (actors/processor/actor.ts), and the replies to its asks.
 *
 *   chain     → processor   JournalNotice (actors/chain/messages.ts)
 *   history   → processor   ask `history.apply` (history-apply.ts), ask `history.publish` (history-publish.ts),
 *                           `backfill.failed` (a cold backfill's job failed)
 *   listeners → processor   asks `artifacts.replay` (artifact-replay.ts), `artifacts.release`, `artifacts.pin`,
 *                           `checkpoint.restore`, `savepoint.create`, `savepoint.delete`; any: ask `status`
 */
import type { ArtifactOwner } from '../../store/artifacts.js';
import type { JournalNotice } from '../chain/messages.js';
import type { ArtifactReplayMessage, ArtifactReplayResult } from './artifact-replay.js';
import type { RestoreResult } from './checkpoint.js';
import type { HistoryApplyMessage } from './history-apply.js';
import type { HistoryPublishMessage, HistoryPublishResult } from './history-publish.js';
import type { SavepointSummary } from '../../store/savepoints.js';

export type { ArtifactReplayMessage } from './artifact-replay.js';
export type { HistoryApplyMessage } from './history-apply.js';
export type { HistoryPublishMessage } from './history-publish.js';

export type BackfillFailed = {
  readonly type: 'backfill.failed';
  readonly job: string;
  readonly blockNumber: number | null;
  readonly message: string;
};

type BlockRange = { readonly fromBlock: number; readonly toBlock: number };

/** Releases one owner's claims on the range (`ownerId` '' for the processor instance itself). */
export type ArtifactsRelease = BlockRange & ArtifactOwner & { readonly type: 'artifacts.release' };

/** An `operator_pin` claim on the retained records of the range. */
export type ArtifactsPin = BlockRange & { readonly type: 'artifacts.pin'; readonly ownerId: string };

export type CheckpointRestore = { readonly type: 'checkpoint.restore'; readonly checkpoint: string };
export type SavepointCreate = { readonly type: 'savepoint.create'; readonly id: string };
export type SavepointDelete = { readonly type: 'savepoint.delete'; readonly id: string };
export type ProcessorStatusAsk = { readonly type: 'status' };

export type ProcessorInbox =
  | JournalNotice | HistoryApplyMessage | HistoryPublishMessage | BackfillFailed
  | ArtifactReplayMessage | ArtifactsRelease | ArtifactsPin
  | CheckpointRestore | SavepointCreate | SavepointDelete | ProcessorStatusAsk;

export interface ProcessorReplies {
  readonly 'history.apply': { readonly applied: number; readonly skipped: number };
  readonly 'history.publish': Pick<HistoryPublishResult, 'published' | 'filled' | 'streamHead' | 'publishedThrough'>;
  readonly 'backfill.failed': { readonly degraded: boolean };
  readonly 'artifacts.replay': Omit<ArtifactReplayResult, 'progress' | 'changes'>;
  /** `freedBytes` as a decimal string. */
  readonly 'artifacts.release': { readonly released: number; readonly deleted: number; readonly freedBytes: string };
  readonly 'artifacts.pin': { readonly pinned: number };
  readonly 'checkpoint.restore': RestoreResult;
  readonly 'savepoint.create': SavepointSummary;
  readonly 'savepoint.delete': { readonly id: string; readonly deleted: true };
}
