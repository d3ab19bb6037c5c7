/**
 * Portable savepoints (spec §2.9, §4.3), ordered-state processors only:
 *
 *   GET    /v1/processors/{p}/savepoints               the kept savepoints (archives not included)
 *   POST   /v1/processors/{p}/savepoints  {id}         creates one: the state as of the finalized block (201)
 *   GET    /v1/processors/{p}/savepoints/{savepoint}   the archive, `application/vnd.node.savepoint`
 *   DELETE /v1/processors/{p}/savepoints/{savepoint}   explicit deletion (204)
 *
 * Creation and deletion are the processor lane's writes, asked over its mailbox; reads come from the store.
 * An archive seeds a new instance of the same kind and version through `seed_savepoint` in `[[processors]]`.
 */
import { z } from 'zod';
import { HttpError } from '../errors.js';
import { bodyWith, type Request } from '../http.js';
import type { Route } from '../routes.js';
import { getSavepoint, isSavepointId, listSavepoints, SAVEPOINT_MEDIA_TYPE } from '../../store/savepoints.js';
import type { AggregateContext, SavepointService } from './aggregate-context.js';
import { instanceAddress, type ConfiguredProcessor } from './configured-processors.js';
import { jsonBytesReply } from './json-body.js';
import { processorTables } from './processor-reader.js';

const ID_RULE = 'a savepoint id is 1-64 characters A-Z a-z 0-9 . _ - starting with a letter or digit';
const BODY = z.strictObject({ id: z.string().refine(isSavepointId, ID_RULE) });

function orderedProcessor(context: AggregateContext, request: Request): ConfiguredProcessor {
  const processor = context.processors.byId(request.params[0] ?? '');
  if (processor.info.ordering !== 'ordered_state') throw new HttpError('not_found', `processor '${processor.id}' is block-local: savepoints hold ordered-state private state`, { processor: processor.id });
  return processor;
}

function savepointParam(request: Request): string {
  const id = request.params[1] ?? '';
  if (!isSavepointId(id)) throw new HttpError('invalid_request', ID_RULE, { parameter: 'savepoint', value: id.slice(0, 80) });
  return id;
}

function service(context: AggregateContext): SavepointService {
  if (!context.savepoints) throw new HttpError('unsupported_capability', 'this listener cannot reach processor lanes to write savepoints');
  return context.savepoints;
}

export function savepointRoutes(context: AggregateContext): Route[] {
  return [
    {
      method: 'get', pattern: '/v1/processors/:processor/savepoints', open: false,
      handler: (request) => {
        const processor = orderedProcessor(context, request);
        const tables = processorTables(context.store, processor.instance);
        return jsonBytesReply(Buffer.from(JSON.stringify({ processor: processor.id, data: tables ? listSavepoints(tables.savepoints) : [] })));
      },
    },
    {
      method: 'post', pattern: '/v1/processors/:processor/savepoints', open: false,
      handler: async (request) => {
        const processor = orderedProcessor(context, request);
        const { id } = bodyWith(BODY, request);
        const savepoint = await service(context).create(instanceAddress(processor), id);
        return { ...jsonBytesReply(Buffer.from(JSON.stringify({ processor: processor.id, savepoint }))), status: 201 };
      },
    },
    {
      method: 'get', pattern: '/v1/processors/:processor/savepoints/:savepoint', open: false,
      handler: (request) => {
        const processor = orderedProcessor(context, request);
        const id = savepointParam(request);
        const tables = processorTables(context.store, processor.instance);
        const record = tables ? getSavepoint(tables.savepoints, id) : undefined;
        if (!record) throw new HttpError('not_found', `no savepoint '${id}' is kept for processor '${processor.id}'`, { processor: processor.id, savepoint: id });
        return {
          body: Buffer.from(record.archive), contentType: SAVEPOINT_MEDIA_TYPE,
          headers: { 'x-node-savepoint-digest': record.digest, 'content-disposition': `attachment; filename="${processor.id}-${id}.savepoint"` },
        };
      },
    },
    {
      method: 'delete', pattern: '/v1/processors/:processor/savepoints/:savepoint', open: false,
      handler: async (request) => {
        const processor = orderedProcessor(context, request);
        const id = savepointParam(request);
        await service(context).remove(instanceAddress(processor), id);
        return { status: 204 };
      },
    },
  ];
}
