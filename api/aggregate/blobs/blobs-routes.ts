/**
 * The blob processor's typed query routes (spec §4.4), canonical under
 * `/v1/processors/{id}/query/blobs/…` and, when exactly one configured instance claims the name,
 * aliased under `/v1/q/blobs/…`.
 */
import type { Handler } from '../../http.js';
import type { Route } from '../../routes.js';
import type { AggregateContext } from '../aggregate-context.js';
import { aliasTarget, BLOBS_EXTENSION, canonicalTarget, type TargetResolver } from './blob-query-target.js';
import { listBlocksHandler, oneBlockHandler } from './blocks-handlers.js';
import { scheduleHandler } from './schedule-handler.js';
import { blobsSnapshotHandler } from '../entities/query-and-follow-routes.js';
import { blockTransactionsHandler, oneTransactionHandler } from './transactions-handlers.js';

const ENDPOINTS: ReadonlyArray<readonly [string, (context: AggregateContext, target: TargetResolver) => Handler]> = [
  ['/blocks', listBlocksHandler],
  ['/blocks/:number', oneBlockHandler],
  ['/transactions', blockTransactionsHandler],
  ['/transactions/:hash', oneTransactionHandler],
  ['/schedule', scheduleHandler],
  ['/snapshot', (context, target) => blobsSnapshotHandler(context, (request) => target(request).processor.id)],
];

export function blobsRoutes(context: AggregateContext): Route[] {
  const mounts: Array<{ base: string; target: TargetResolver }> = [{ base: `/v1/processors/:processor/query/${BLOBS_EXTENSION}`, target: canonicalTarget(context) }];
  const claimants = context.processors.claimants(BLOBS_EXTENSION);
  if (claimants.length === 1) mounts.push({ base: `/v1/q/${BLOBS_EXTENSION}`, target: aliasTarget(claimants[0]!) });
  return mounts.flatMap(({ base, target }) =>
    ENDPOINTS.map(([path, handler]): Route => ({ method: 'get', pattern: `${base}${path}`, open: false, handler: handler(context, target) })),
  );
}
