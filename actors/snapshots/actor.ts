/**
 * Lane `snapshots`: the one writer of query-and-follow snapshots (`snapshots` and `snapshot.rows`,
 * store/snapshots.ts). Listeners open the store read-only and may run as several workers, so
 * materializing goes through this single actor (ARCHITECTURE: writers never share a table); the
 * listener gets a small summary back and reads the rows from LMDB itself.
 *
 * Accepts SnapshotsInbox (messages.ts; replies SnapshotsReplies):
 *   ask `create`  {processor, collection, params}: materializes a snapshot in one write transaction
 *                 (api/aggregate/entities/snapshot-materialize.ts) → SnapshotSummary, or the spec error.
 *   ask `release` {processor, snapshot}: drops its rows and keeps a tombstone → {released: true};
 *                 `not_found` for an unknown snapshot (or one of another processor).
 * Sends: nothing. A timer sweeps expired snapshots (rows removed in bounded transactions, tombstone
 * kept for `tombstone_seconds` so a late page still answers "expired" rather than "unknown").
 */
import { defineActor, unknownTag, type ActorContext } from '../../runtime/actor.js';
import { CodedError } from '../../runtime/errors.js';
import { errorFields } from '../../runtime/log.js';
import { openStore, type Store } from '../../store/store.js';
import { listSnapshots, readSnapshot, removeSnapshotRows, type SnapshotRecord } from '../../store/snapshots.js';
import { createProcessorRegistry, type ConfiguredProcessor } from '../../api/aggregate/configured-processors.js';
import { storeServingLookup } from '../../api/aggregate/serving-instances.js';
import { materializeSnapshot, type SnapshotLimits } from '../../api/aggregate/entities/snapshot-materialize.js';
import type { SnapshotsInbox, SnapshotsReplies } from './messages.js';
import { resolveKind } from '../kinds/kind-catalog.js';

export interface SnapshotsArgs {
  readonly dataDir: string;
  readonly chainId: number;
  readonly processors: readonly ConfiguredProcessor[];
  readonly limits: SnapshotLimits;
  readonly sweepIntervalSeconds: number;
  readonly tombstoneSeconds: number;
}

interface State {
  readonly store: Store;
  timer: NodeJS.Timeout | null;
  sweeping: Promise<void> | null;
}

type Ctx = ActorContext<SnapshotsArgs>;

/** Rows removed per write transaction while sweeping: keeps each transaction (and the processors waiting on it) short. */
const SWEEP_BATCH = 10_000;

/** A processor id (its serving instance) or a rebuild's replacement instance id (instanceAddress). */
function processorOf(ctx: Ctx, store: Store, id: string): ConfiguredProcessor {
  const processor = createProcessorRegistry(ctx.args.processors, storeServingLookup(store)).find(id);
  if (!processor) throw new CodedError('not_found', `no processor '${id}' is configured on this node`, { processor: id });
  return processor;
}

/** Removes a snapshot's rows in bounded transactions, then writes its tombstone. */
async function retire(ctx: Ctx, store: Store, record: SnapshotRecord, state: 'released' | 'expired'): Promise<void> {
  const forgetAt = Date.now() + ctx.args.tombstoneSeconds * 1000;
  await store.write(() => store.snapshots.put(record.id, { ...record, state, forgetAt }));
  for (;;) {
    const removed = await store.write(() => removeSnapshotRows(store.snapshotRows, record.id, SWEEP_BATCH));
    if (removed < SWEEP_BATCH) break;
  }
}

async function sweep(ctx: Ctx, state: State): Promise<void> {
  const now = Date.now();
  for (const record of listSnapshots(state.store.snapshots)) {
    if (record.state === 'active' && record.expiresAt <= now) {
      await retire(ctx, state.store, record, 'expired');
      ctx.log.debug('snapshot expired', { snapshot: record.id, rows: record.rowCount });
    } else if (record.state !== 'active' && record.forgetAt !== null && record.forgetAt <= now) {
      // A crash between the tombstone and its last row batch leaves rows behind: remove them before forgetting.
      await retire(ctx, state.store, record, record.state);
      await state.store.write(() => state.store.snapshots.remove(record.id));
    }
  }
}

export default defineActor<State, SnapshotsArgs, SnapshotsInbox>({
  init(ctx) {
    const store = openStore({ dataDir: ctx.args.dataDir });
    const state: State = { store, timer: null, sweeping: null };
    const tick = () => {
      if (state.sweeping) return;
      state.sweeping = sweep(ctx, state)
        .catch((error: unknown) => ctx.log.warn('snapshot sweep failed; retried next interval', errorFields(error)))
        .finally(() => { state.sweeping = null; });
    };
    state.timer = setInterval(tick, ctx.args.sweepIntervalSeconds * 1000);
    tick();
    ctx.ready();
    return state;
  },
  async handle(message, state, ctx) {
    switch (message.type) {
      case 'create': {
        const processor = processorOf(ctx, state.store, message.processor);
        const record = materializeSnapshot(state.store, ctx.args.chainId, processor, (await resolveKind(processor, ctx.args.dataDir)).collections, message.collection, message.params, ctx.args.limits, Date.now());
        ctx.log.debug('snapshot created', { snapshot: record.id, processor: processor.id, collection: record.collection, rows: record.rowCount, bytes: record.valueBytes });
        return { id: record.id, rowCount: record.rowCount, valueBytes: record.valueBytes, expiresAt: record.expiresAt } satisfies SnapshotsReplies['create'];
      }
      case 'release': {
        const processor = processorOf(ctx, state.store, message.processor);
        const record = readSnapshot(state.store.snapshots, message.snapshot);
        if (!record || record.processorId !== processor.id) {
          throw new CodedError('not_found', `processor '${processor.id}' has no snapshot ${message.snapshot}`, { snapshot: message.snapshot });
        }
        if (record.state === 'active') await retire(ctx, state.store, record, 'released');
        return { released: true } satisfies SnapshotsReplies['release'];
      }
      default:
        throw new Error(`snapshots does not accept '${unknownTag(message)}'`);
    }
  },
  async stop(state) {
    if (state.timer) clearInterval(state.timer);
    await state.sweeping;
    await state.store.close();
  },
});
