/**
 * The generic entity API (spec §2.7, §4.3) over every processor kind's collections:
 *
 *   GET /v1/processors/{p}/collections                          the kind's collections, each with retainedBounds
 *   GET /v1/processors/{p}/collections/{c}/entities             a Page of entity results (live read, or a
 *                                                               query-and-follow snapshot page by its cursor)
 *   GET /v1/processors/{p}/collections/{c}/entities/{key}       one entity result; the key is URL-safe hex
 *
 * A live read takes rows, coverage and the change boundary in one synchronous turn (one LMDB read
 * snapshot), so the boundary names exactly the state the rows come from.
 */
import { HttpError } from '../../errors.js';
import type { Request } from '../../http.js';
import type { Route } from '../../routes.js';
import type { AggregateContext } from '../aggregate-context.js';
import { jsonBytesReply } from '../json-body.js';
import { processorTables, readCoverage } from '../processor-reader.js';
import { readProgress } from '../../../store/coverage.js';
import { pageLimit } from '../query-params.js';
import { collectionsOf, collectionTarget, type CollectionTarget } from './collection-target.js';
import { decodeLivePage, encodeLivePage, liveScope, snapshotScope, tokenHasScope, type EntityFilter } from './entity-page-token.js';
import { checkRetained, filterParamsOf, resolveFilter, rowMatches, type FilterParams } from './entity-query.js';
import { ENTITY_KEY, ENTITY_RESULT_CLOSE, entityResultBytes, entityResultHead } from './entity-result.js';
import { PageBytes } from './page-body.js';
import { liveSnapshotId, readBoundary } from './read-boundary.js';

/** Serves a snapshot page by its token (installed by the query-and-follow module). */
export type SnapshotPageReader = (target: CollectionTarget, token: string, limit: number) => Buffer;

export function entitiesRoutes(context: AggregateContext, snapshotPage: SnapshotPageReader | null): Route[] {
  return [
    { method: 'get', pattern: '/v1/processors/:processor/collections', open: false, handler: (request) => collectionsList(context, request) },
    {
      method: 'get', pattern: '/v1/processors/:processor/collections/:collection/entities', open: false,
      handler: (request) => {
        const target = collectionTarget(context, request.params[0] ?? '', request.params[1] ?? '');
        const limit = pageLimit(request.query, context.limits);
        const cursor = request.query.get('cursor');
        const { epoch } = context.store;
        if (cursor !== null && snapshotPage && tokenHasScope(cursor, snapshotScope(epoch, target.processor.instance, target.collection.name))) {
          if (hasFilterParams(request.query)) throw new HttpError('invalid_request', 'a snapshot page cursor carries its own range; send it with limit only', { parameter: 'cursor' });
          return jsonBytesReply(snapshotPage(target, cursor, limit));
        }
        return jsonBytesReply(livePage(context, target, request.query, cursor, limit));
      },
    },
    {
      method: 'get', pattern: '/v1/processors/:processor/collections/:collection/entities/:key', open: false,
      handler: (request) => {
        const raw = request.params[2] ?? '';
        if (!ENTITY_KEY.test(raw)) throw new HttpError('invalid_request', 'an entity key is URL-safe hex: an even number of lowercase hex digits (at most 256), without 0x', { parameter: 'key' });
        const target = collectionTarget(context, request.params[0] ?? '', request.params[1] ?? '');
        const { processor, collection, tables } = target;
        checkRetained(processor, { fromBlock: null, toBlock: null, fromTimestamp: null, toTimestamp: null, explicit: false }, target.retained, () => readCoverage(context.store, context.chainId, processor));
        const key = Buffer.from(raw, 'hex');
        // The finalized block before the row: a kind may derive the row's finality from it (store/collection.ts).
        const row = tables && collection.owns(key) ? collection.get(tables.entities, key, readProgress(tables.state).finalizedNumber) : undefined;
        if (!row) throw new HttpError('not_found', `collection '${collection.name}' of processor '${processor.id}' holds no entity ${raw}`, { collection: collection.name, key: raw });
        const boundary = readBoundary({ epoch: context.store.epoch, chainId: context.chainId }, processor, tables);
        const fields = {
          snapshotId: liveSnapshotId(boundary.changeBoundary), ...boundary,
          retainedBounds: tables ? collection.bounds(tables.entities) : null, coverage: readCoverage(context.store, context.chainId, processor),
        };
        return jsonBytesReply(Buffer.concat([Buffer.from('{"data":'), entityResultBytes(collection, row), Buffer.from(`,${JSON.stringify(fields).slice(1)}`)]));
      },
    },
  ];
}

function collectionsList(context: AggregateContext, request: Request) {
  const processor = context.processors.byId(request.params[0] ?? '');
  const base = `/v1/processors/${encodeURIComponent(processor.id)}/collections`;
  const tables = processorTables(context.store, processor.instance);
  return {
    body: {
      data: collectionsOf(context, processor).map((c) => ({
        name: c.name, description: c.description, schema: c.schema, entities: `${base}/${c.name}/entities`, queryAndFollow: `${base}/${c.name}/query-and-follow`,
        retainedBounds: tables && processor.output !== 'none' ? c.bounds(tables.entities) : null,
      })),
      output: processor.output,
      delivery: processor.delivery,
      coverage: readCoverage(context.store, context.chainId, processor),
    },
  };
}

const FILTER_NAMES = ['fromBlock', 'toBlock', 'fromTimestamp', 'toTimestamp'] as const;

function hasFilterParams(query: URLSearchParams): boolean {
  return FILTER_NAMES.some((name) => query.has(name));
}

function sameFilter(params: FilterParams, filter: EntityFilter): boolean {
  return FILTER_NAMES.every((name) => params[name] === undefined || params[name] === filter[name]);
}

function livePage(context: AggregateContext, target: CollectionTarget, query: URLSearchParams, cursor: string | null, limit: number): Buffer {
  const { processor, collection, tables } = target;
  const scope = liveScope(context.store.epoch, processor.instance, collection.name);
  const params = filterParamsOf(query);
  let filter: EntityFilter;
  let after: Buffer | null = null;
  if (cursor !== null) {
    ({ filter, after } = decodeLivePage(cursor, scope));
    if (!sameFilter(params, filter)) throw new HttpError('invalid_request', 'a page cursor carries its own range; send it with the same parameters or with limit only', { parameter: 'cursor' });
  } else {
    filter = resolveFilter(params, target.retained, context.limits.maxBlockRange);
  }
  const requested = filter.explicit && filter.fromBlock !== null && filter.toBlock !== null ? { fromBlock: filter.fromBlock, toBlock: filter.toBlock } : undefined;
  const coverage = readCoverage(context.store, context.chainId, processor, requested);
  checkRetained(processor, filter, target.retained, () => coverage);
  const page = new PageBytes();
  let rows = 0;
  let last: Buffer | null = null;
  let more = false;
  if (tables) {
    // The finalized block before the rows: a kind may derive a row's finality from it (store/collection.ts).
    const finalizedNumber = readProgress(tables.state).finalizedNumber;
    for (const row of collection.scan(tables.entities, { fromBlock: filter.fromBlock, toBlock: filter.toBlock, after, finalizedNumber })) {
      if (!rowMatches(filter, row.meta)) continue;
      if (rows === limit) {
        more = true;
        break;
      }
      // The stored row is written into the page as it is, between its result's head and closing brace.
      page.addRow(entityResultHead(collection, row), row.value, ENTITY_RESULT_CLOSE);
      rows += 1;
      last = row.position;
    }
  }
  const boundary = readBoundary({ epoch: context.store.epoch, chainId: context.chainId }, processor, tables);
  return page.finish({
    nextCursor: more ? encodeLivePage(scope, { filter, after: last }) : null,
    coverage,
    snapshotId: liveSnapshotId(boundary.changeBoundary),
    ...boundary,
    retainedBounds: tables ? collection.bounds(tables.entities) : null,
  });
}
