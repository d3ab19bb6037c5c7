/**
 * Automatic recovery checkpoints (spec §2.9, §3.5, §4.3):
 *
 *   GET  /v1/processors/{p}/checkpoints                          the retained checkpoints, newest first (rows not included)
 *   POST /v1/processors/{p}/checkpoints/{checkpoint}/restore     repairs the private state from the checkpoint at the
 *                                                                exact current reduce cursor; any other is 409 `conflict`
 *
 * Checkpoints are taken by the processor lane (ordered-state kinds only); the restore is its write, asked over its mailbox.
 */
import { HttpError } from '../errors.js';
import type { Route } from '../routes.js';
import { listCheckpoints, parseCheckpointId } from '../../store/checkpoints.js';
import type { AggregateContext } from './aggregate-context.js';
import { instanceAddress } from './configured-processors.js';
import { jsonBytesReply } from './json-body.js';
import { processorTables } from './processor-reader.js';

export function checkpointRoutes(context: AggregateContext): Route[] {
  return [
    {
      method: 'get', pattern: '/v1/processors/:processor/checkpoints', open: false,
      handler: (request) => {
        const processor = context.processors.byId(request.params[0] ?? '');
        const tables = processorTables(context.store, processor.instance);
        const data = tables ? listCheckpoints(tables.checkpoints) : [];
        return jsonBytesReply(Buffer.from(JSON.stringify({ processor: processor.id, ordering: processor.info.ordering, data })));
      },
    },
    {
      method: 'post', pattern: '/v1/processors/:processor/checkpoints/:checkpoint/restore', open: false,
      handler: async (request) => {
        const processor = context.processors.byId(request.params[0] ?? '');
        const checkpoint = request.params[1] ?? '';
        if (parseCheckpointId(checkpoint) === null) throw new HttpError('invalid_request', 'a checkpoint id is the decimal block number it was taken at', { parameter: 'checkpoint', value: checkpoint.slice(0, 40) });
        if (processor.info.ordering !== 'ordered_state') throw new HttpError('not_found', `processor '${processor.id}' is block-local and keeps no checkpoints`, { processor: processor.id, checkpoint });
        if (!context.checkpoints) throw new HttpError('unsupported_capability', 'this listener cannot reach processor lanes to restore a checkpoint');
        const restored = await context.checkpoints.restore(instanceAddress(processor), checkpoint);
        return jsonBytesReply(Buffer.from(JSON.stringify({ processor: processor.id, restored })));
      },
    },
  ];
}
