/**
 * Artifact administration (spec §4.5, §4.6; protected by the API bearer when one is configured):
 *
 *   POST   /admin/v1/processors/{source}/artifacts/replay  {targetProcessor, fromBlock, toBlock, limit?}
 *          applies the source's retained artifacts to the target — a distinct instance configured with
 *          `[processors.artifacts] replay_from = "<source>"` (same kind, version and options) — in chain order
 *   DELETE /admin/v1/processors/{processor}/artifacts?fromBlock&toBlock&ownerKind&ownerId
 *          releases one owner's claims (default: the processor instance's); a record another owner claims stays
 *   POST   /admin/v1/processors/{processor}/artifacts/pins    {ownerId, fromBlock, toBlock}
 *          an `operator_pin` claim on the retained records of the range (kept until that pin is released)
 *
 * The writes are the processor lanes' (asked over their mailboxes); validation is here.
 */
import { z } from 'zod';
import { withBlockRange } from './block-range.js';
import { HttpError } from '../errors.js';
import { bodyWith } from '../http.js';
import type { Route } from '../routes.js';
import type { AggregateContext, ArtifactService } from '../aggregate/aggregate-context.js';
import { retainingProcessor } from '../aggregate/artifact-routes.js';
import { optionalBlockNumber } from '../aggregate/query-params.js';
import type { ArtifactOwner } from '../../store/artifacts.js';

const OWNER_ID = /^[A-Za-z0-9][A-Za-z0-9._~:@+-]{0,127}$/;
const OWNER_ID_RULE = 'expected 1-128 characters A-Z a-z 0-9 . _ ~ : @ + - starting with a letter or digit';

const replayBody = withBlockRange({
  targetProcessor: z.string().min(1).max(128),
  limit: z.number().int().min(1).optional(),
});

const pinBody = withBlockRange({
  ownerId: z.string().regex(OWNER_ID, OWNER_ID_RULE),
});

function service(context: AggregateContext): ArtifactService {
  if (!context.artifacts) throw new HttpError('unsupported_capability', 'this listener cannot reach processor lanes to change artifacts');
  return context.artifacts;
}

function releaseQuery(query: URLSearchParams): { fromBlock: number; toBlock: number } & ArtifactOwner {
  const fromBlock = optionalBlockNumber(query, 'fromBlock') ?? 0;
  const toBlock = optionalBlockNumber(query, 'toBlock') ?? Number.MAX_SAFE_INTEGER;
  if (fromBlock > toBlock) throw new HttpError('invalid_request', `'fromBlock' ${fromBlock} is after 'toBlock' ${toBlock}`, { fromBlock, toBlock });
  const kind = query.get('ownerKind');
  const ownerId = query.get('ownerId');
  if (kind === null) {
    if (ownerId !== null) throw new HttpError('invalid_request', "'ownerId' names a processor_job or operator_pin owner: give 'ownerKind' with it", { parameter: 'ownerId' });
    return { fromBlock, toBlock, ownerKind: 'processor' as const, ownerId: '' };
  }
  if (kind !== 'processor_job' && kind !== 'operator_pin') throw new HttpError('invalid_request', `'ownerKind' must be processor_job or operator_pin (absent: the processor instance), got '${kind.slice(0, 32)}'`, { parameter: 'ownerKind' });
  if (ownerId === null || !OWNER_ID.test(ownerId)) throw new HttpError('invalid_request', `'ownerId' is required with ownerKind ${kind}: ${OWNER_ID_RULE}`, { parameter: 'ownerId' });
  return { fromBlock, toBlock, ownerKind: kind, ownerId };
}

export function artifactAdminRoutes(context: AggregateContext): Route[] {
  return [
    {
      method: 'post', pattern: '/admin/v1/processors/:source/artifacts/replay', open: false,
      handler: async (request) => {
        const source = retainingProcessor(context, request.params[0] ?? '');
        const body = bodyWith(replayBody, request);
        const target = context.processors.byId(body.targetProcessor);
        if (target.id === source.id) throw new HttpError('invalid_request', 'targetProcessor must be another processor instance than the source', { field: 'targetProcessor' });
        if (target.artifacts?.replayFrom !== source.id) {
          throw new HttpError('unsupported_capability', `processor '${target.id}' does not take artifacts from '${source.id}': configure it with [processors.artifacts] replay_from = "${source.id}" (the same kind and options)`, { targetProcessor: target.id, source: source.id });
        }
        const limit = body.limit ?? context.limits.defaultPageLimit;
        if (limit > context.limits.maxBlockRange) throw new HttpError('query_too_expensive', `'limit' ${limit} exceeds the configured maximum block range of ${context.limits.maxBlockRange}`, { limit, maxBlockRange: context.limits.maxBlockRange });
        const result = await service(context).replay(target.id, { fromBlock: body.fromBlock, toBlock: body.toBlock, limit }) as { replayed: number; missingBlock: number | null };
        if (result.replayed === 0 && result.missingBlock !== null) {
          throw new HttpError('output_not_retained', `processor '${source.id}' retains no artifact of block ${result.missingBlock}, where the replay would start`, { source: source.id, missingBlock: result.missingBlock, action: 'rebuild' });
        }
        return { body: { source: source.id, targetProcessor: target.id, fromBlock: body.fromBlock, toBlock: body.toBlock, limit, ...result } };
      },
    },
    {
      method: 'delete', pattern: '/admin/v1/processors/:processor/artifacts', open: false,
      handler: async (request) => {
        const processor = retainingProcessor(context, request.params[0] ?? '');
        const release = releaseQuery(request.query);
        const result = await service(context).release(processor.id, release) as Record<string, unknown>;
        return { body: { processor: processor.id, ...release, ...(release.ownerId === '' ? { ownerId: null } : {}), ...result } };
      },
    },
    {
      method: 'post', pattern: '/admin/v1/processors/:processor/artifacts/pins', open: false,
      handler: async (request) => {
        const processor = retainingProcessor(context, request.params[0] ?? '');
        const body = bodyWith(pinBody, request);
        const result = await service(context).pin(processor.id, body) as { pinned: number };
        return { body: { processor: processor.id, ownerKind: 'operator_pin', ...body, ...result } };
      },
    },
  ];
}
