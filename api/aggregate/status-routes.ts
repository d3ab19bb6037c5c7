/**
 * Node and processor status (spec §4.3): `/v1/status`, `/v1/processors`,
 * `/v1/processors/{p}/status` (coverage read from the store, independent of process health) and
 * `/v1/processors/{p}/schema` (rendered once at start).
 */
import { epochToHex } from '../../store/meta.js';
import type { Route } from '../routes.js';
import type { AggregateContext } from './aggregate-context.js';
import { kindInfo, processorDescriptor, type ConfiguredProcessor } from './configured-processors.js';
import { jsonBytesReply } from './json-body.js';
import { liveHead, readCoverage } from './processor-reader.js';

export const API_VERSION = '1';

function processorStatus(context: AggregateContext, processor: ConfiguredProcessor) {
  return { processor: processorDescriptor(processor), coverage: readCoverage(context.store, context.chainId, processor) };
}

export function statusRoutes(context: AggregateContext): Route[] {
  const schemas = new Map(context.processors.all.map((p) => [p.id, Buffer.from(JSON.stringify({ ...(kindInfo(p).schema as object), processor: processorDescriptor(p) }))]));
  return [
    {
      method: 'get', pattern: '/v1/status', open: false,
      handler: () => ({
        body: {
          apiVersion: API_VERSION,
          chainId: context.chainId,
          network: context.network,
          storeEpoch: epochToHex(context.store.epoch),
          head: liveHead(context.store),
          processors: context.processors.all.map((p) => processorStatus(context, p)),
        },
      }),
    },
    {
      method: 'get', pattern: '/v1/processors', open: false,
      handler: () => ({ body: { data: context.processors.all.map((p) => processorStatus(context, p)) } }),
    },
    {
      method: 'get', pattern: '/v1/processors/:processor/status', open: false,
      handler: (request) => ({ body: processorStatus(context, context.processors.byId(request.params[0] ?? '')) }),
    },
    {
      method: 'get', pattern: '/v1/processors/:processor/schema', open: false,
      handler: (request) => jsonBytesReply(schemas.get(context.processors.byId(request.params[0] ?? '').id)!),
    },
  ];
}
