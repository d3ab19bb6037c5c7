/**
 * Query-and-follow (spec §2.7, §4.3, §4.4 rules 5–7):
 *
 *   POST   /v1/processors/{p}/collections/{c}/query-and-follow   body {fromBlock?, toBlock?, fromTimestamp?, toTimestamp?, limit?}
 *                                                                 creates a snapshot and answers its first page; body {cursor, limit?}
 *                                                                 answers a later page (as does GET …/entities?cursor=)
 *   DELETE /v1/processors/{p}/query-snapshots/{s}                 releases a snapshot early (204)
 *   a kind's typed wrapper (e.g. GET /v1/q/blobs/snapshot over `blocks`, see collectionSnapshotReply): one collection, parameters in the query string
 *
 * The `snapshots` lane materializes a snapshot (snapshot-materialize.ts); this listener reads its pages.
 * A processor with delivery disabled answers 409 `delivery_disabled`: there is no feed to follow.
 */
import { z } from 'zod';
import { HttpError } from '../../errors.js';
import { bodyWith, requireJsonType, type Request } from '../../http.js';
import type { Route } from '../../routes.js';
import { isSnapshotId, readSnapshot } from '../../../store/snapshots.js';
import type { AggregateContext } from '../aggregate-context.js';
import { instanceAddress, requireDelivery, requireRetainedOutput } from '../configured-processors.js';
import { jsonBytesReply, type JsonReply } from '../json-body.js';
import { pageLimit } from '../query-params.js';
import { collectionTarget, type CollectionTarget } from './collection-target.js';
import { filterParamsOf, type FilterParams } from './entity-query.js';
import type { SnapshotPageReader } from './entities-routes.js';
import type { SnapshotService } from './snapshot-service.js';
import { snapshotPageByToken, snapshotPageBytes } from './snapshot-pages.js';

const blockNumber = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const BODY = z.strictObject({
  fromBlock: blockNumber.optional(),
  toBlock: blockNumber.optional(),
  fromTimestamp: blockNumber.optional(),
  toTimestamp: blockNumber.optional(),
  limit: z.number().int().min(1).optional(),
  cursor: z.string().min(1).max(256).optional(),
});

type Body = z.infer<typeof BODY>;

function parseBody(request: Request): Body {
  requireJsonType(request);
  if (request.body.length === 0) return {};
  const body = bodyWith(BODY, request);
  if (body.cursor !== undefined && (['fromBlock', 'toBlock', 'fromTimestamp', 'toTimestamp'] as const).some((k) => body[k] !== undefined)) {
    throw new HttpError('invalid_request', 'a page cursor carries its own range; send it with limit only', { field: 'cursor' });
  }
  return body;
}

/** The page size from a body `limit` or the query string, within the configured limits. */
function limitOf(context: AggregateContext, limit: number | undefined): number {
  return pageLimit(new URLSearchParams(limit === undefined ? '' : `limit=${limit}`), context.limits);
}

async function createAndFirstPage(context: AggregateContext, target: CollectionTarget, params: FilterParams, limit: number): Promise<Buffer> {
  const service = requireService(context.snapshots);
  const summary = await service.create({ processor: instanceAddress(target.processor), collection: target.collection.name, params });
  // The snapshot was committed by another thread: read it in a fresh read transaction.
  context.store.env.resetReadTxn();
  const record = readSnapshot(context.store.snapshots, summary.id);
  if (!record) throw new Error(`snapshot ${summary.id} was created but is not readable`);
  return snapshotPageBytes(context.store, record, 0, limit, Date.now());
}

function requireService(service: SnapshotService | undefined): SnapshotService {
  if (!service) throw new HttpError('unsupported_capability', 'this listener has no snapshot lane to materialize query-and-follow snapshots');
  return service;
}

export const readSnapshotPage = (context: AggregateContext): SnapshotPageReader => (target, token, limit) => snapshotPageByToken(context.store, target, token, limit, Date.now());

export function queryAndFollowRoutes(context: AggregateContext): Route[] {
  return [
    {
      method: 'post', pattern: '/v1/processors/:processor/collections/:collection/query-and-follow', open: false,
      handler: async (request) => {
        const target = collectionTarget(context, request.params[0] ?? '', request.params[1] ?? '');
        requireDelivery(target.processor);
        requireRetainedOutput(target.processor);
        const body = parseBody(request);
        const limit = limitOf(context, body.limit);
        if (body.cursor !== undefined) return jsonBytesReply(snapshotPageByToken(context.store, target, body.cursor, limit, Date.now()));
        return jsonBytesReply(await createAndFirstPage(context, target, body, limit));
      },
    },
    {
      method: 'delete', pattern: '/v1/processors/:processor/query-snapshots/:snapshot', open: false,
      handler: async (request) => {
        const processor = context.processors.byId(request.params[0] ?? '');
        const id = request.params[1] ?? '';
        if (!isSnapshotId(id)) throw new HttpError('invalid_request', 'a snapshot id is 16 base64url characters', { parameter: 'snapshot' });
        await requireService(context.snapshots).release(processor.id, id);
        return { status: 204 };
      },
    },
  ];
}

/** A typed snapshot wrapper (e.g. `GET …/blobs/snapshot`): query-and-follow of one collection with its parameters in the query string. */
export async function collectionSnapshotReply(context: AggregateContext, processorId: string, collection: string, query: URLSearchParams): Promise<JsonReply> {
  const target = collectionTarget(context, processorId, collection);
  requireDelivery(target.processor);
  requireRetainedOutput(target.processor);
  const limit = pageLimit(query, context.limits);
  const cursor = query.get('cursor');
  if (cursor !== null) return jsonBytesReply(snapshotPageByToken(context.store, target, cursor, limit, Date.now()));
  return jsonBytesReply(await createAndFirstPage(context, target, filterParamsOf(query), limit));
}
