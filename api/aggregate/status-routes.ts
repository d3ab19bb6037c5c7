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
import { laneTroubleOf } from './lane-health.js';
import { liveHead, processorTables, readCoverage } from './processor-reader.js';
import { readProgress } from '../../store/coverage.js';
import { listRebuilds } from '../../store/rebuilds.js';
import { publicationOf } from './publication-status.js';

export const API_VERSION = '1';

/** The processor's rebuilds (spec §9.5) with each replacement instance's coverage; absent when it has none. */
function rebuildsOf(context: AggregateContext, processor: ConfiguredProcessor) {
  const records = listRebuilds(context.store).filter((record) => record.processor === processor.id);
  if (records.length === 0) return {};
  return {
    rebuilds: records.map((record) => ({
      id: record.id, state: record.state, instance: record.instance,
      coverage: readCoverage(context.store, context.chainId, { ...processor, instance: record.instance, laneId: record.instance }),
    })),
  };
}

/**
 * Why the instance is in its state: the lane trouble that makes it `degraded` or `failed` (its own lane, or a chain
 * lane it depends on), else what its lane recorded (a failed cold backfill, the artifact budget, a new instance
 * `starting` while its cold backfill waits for finality); absent when there is neither.
 */
function stateReasonOf(context: AggregateContext, processor: ConfiguredProcessor): { stateReason?: string } {
  const trouble = laneTroubleOf(processor.id);
  if (trouble) return { stateReason: trouble.reason };
  const tables = processorTables(context.store, processor.instance);
  const stored = tables ? readProgress(tables.state).stateReason : null;
  return stored === null ? {} : { stateReason: stored };
}

function processorStatus(context: AggregateContext, processor: ConfiguredProcessor) {
  return {
    processor: processorDescriptor(processor), coverage: readCoverage(context.store, context.chainId, processor),
    ...stateReasonOf(context, processor), ...rebuildsOf(context, processor), ...publicationOf(processor.id),
  };
}

function schemaDocument(processor: ConfiguredProcessor): Buffer {
  return Buffer.from(JSON.stringify({ ...(kindInfo(processor).schema as object), processor: processorDescriptor(processor) }));
}

export function statusRoutes(context: AggregateContext): Route[] {
  const schemas = new Map(context.processors.all.map((p) => [`${p.id}/${p.instance}`, schemaDocument(p)]));
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
      handler: (request) => {
        // Another instance than at start (a rebuild's replacement) names itself in the descriptor.
        const processor = context.processors.byId(request.params[0] ?? '');
        return jsonBytesReply(schemas.get(`${processor.id}/${processor.instance}`) ?? schemaDocument(processor));
      },
    },
  ];
}
