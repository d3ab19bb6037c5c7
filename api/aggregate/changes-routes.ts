/**
 * The polled change feed (spec §4.3): `/v1/processors/{p}/changes/head` and
 * `/v1/processors/{p}/changes?after&limit`, a Page of ChangeEnvelope built from the log's stored
 * JSON bytes. `nextCursor` is the last envelope's cursor when the page is full, else null.
 */
import { readChanges } from '../../store/change-log.js';
import type { Route } from '../routes.js';
import type { AggregateContext } from './aggregate-context.js';
import { requireDelivery } from './configured-processors.js';
import { resumePosition } from './change-position.js';
import { jsonBytesReply, pageBytes } from './json-body.js';
import { changeBounds, processorTables, readCoverage } from './processor-reader.js';
import { pageLimit } from './query-params.js';

export function changesRoutes(context: AggregateContext): Route[] {
  const { store, chainId } = context;
  return [
    {
      method: 'get', pattern: '/v1/processors/:processor/changes/head', open: false,
      handler: (request) => {
        const processor = context.processors.byId(request.params[0] ?? '');
        requireDelivery(processor);
        const tables = processorTables(store, processor.instance);
        const bounds = changeBounds(processor, tables);
        const headChange = tables && bounds.head > 0n ? readChanges({ changes: tables.changes, epoch: store.epoch, chainId, instance: processor.instance }, bounds.head - 1n, 1)[0] : undefined;
        return {
          body: {
            sequence: bounds.head.toString(),
            cursor: headChange?.sequence === bounds.head ? headChange.cursor : null,
            coverage: readCoverage(store, chainId, processor),
          },
        };
      },
    },
    {
      method: 'get', pattern: '/v1/processors/:processor/changes', open: false,
      handler: (request) => {
        const processor = context.processors.byId(request.params[0] ?? '');
        requireDelivery(processor);
        const limit = pageLimit(request.query, context.limits);
        const tables = processorTables(store, processor.instance);
        const owner = { epoch: store.epoch, chainId, instance: processor.instance };
        const after = resumePosition(request.query.get('after') ?? undefined, owner, changeBounds(processor, tables));
        const changes = tables ? readChanges({ ...owner, changes: tables.changes }, after, limit) : [];
        const nextCursor = changes.length === limit ? changes[changes.length - 1]!.cursor : null;
        return jsonBytesReply(pageBytes(changes.map((change) => change.json), nextCursor, readCoverage(store, chainId, processor)));
      },
    },
  ];
}
