/**
 * The blob processor's typed query extension (spec §4.4): `/blocks`, `/blocks/{number}`,
 * `/transactions`, `/transactions/{hash}`, `/schedule` and the `/snapshot` wrapper over the `blocks`
 * collection's query-and-follow, mounted by the listener under the canonical and alias bases.
 */
import type { QueryExtension } from '../../sdk/query/index.js';
import { listBlocks, oneBlock } from './blocks-handlers.js';
import { schedule } from './schedule-handler.js';
import { blockTransactions, oneTransaction } from './transactions-handlers.js';

export const BLOBS_QUERY: QueryExtension = {
  name: 'blobs',
  endpoints: [
    { path: '/blocks', handle: listBlocks },
    { path: '/blocks/:number', handle: oneBlock },
    { path: '/transactions', handle: blockTransactions },
    { path: '/transactions/:hash', handle: oneTransaction },
    { path: '/schedule', handle: schedule },
    { path: '/snapshot', handle: (request) => request.collectionSnapshot('blocks') },
  ],
};
