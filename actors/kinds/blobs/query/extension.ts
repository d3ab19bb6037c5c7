/**
 * The blob processor's typed query extension (spec §4.4): `/blocks`, `/blocks/{number}`,
 * `/transactions`, `/transactions/{hash}`, `/schedule` and the `/snapshot` wrapper over the `blocks`
 * collection's query-and-follow, mounted by the listener under the canonical and alias bases.
 */
import type { QueryExtension } from '../../../../api/aggregate/kind-surface.js';
import { collectionSnapshotHandler } from '../../../../api/aggregate/entities/query-and-follow-routes.js';
import { BLOBS_EXTENSION } from './blob-query-target.js';
import { listBlocksHandler, oneBlockHandler } from './blocks-handlers.js';
import { scheduleHandler } from './schedule-handler.js';
import { blockTransactionsHandler, oneTransactionHandler } from './transactions-handlers.js';

export const BLOBS_QUERY: QueryExtension = {
  name: BLOBS_EXTENSION,
  endpoints: [
    { path: '/blocks', handler: listBlocksHandler },
    { path: '/blocks/:number', handler: oneBlockHandler },
    { path: '/transactions', handler: blockTransactionsHandler },
    { path: '/transactions/:hash', handler: oneTransactionHandler },
    { path: '/schedule', handler: scheduleHandler },
    { path: '/snapshot', handler: (context, target) => collectionSnapshotHandler(context, (request) => target(request).processor.id, 'blocks') },
  ],
};
