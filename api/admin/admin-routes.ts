/**
 * Administration routes (spec §4.6), protected by the API bearer when one is configured (they are not `open`):
 *
 *   POST   /admin/v1/materialization-jobs                {processor, fromBlock, toBlock, mode: "fill_missing", idempotencyKey, source?}
 *                                                        201 new job; 200 the same job for the same key and body; 409 same key, other body
 *   GET    /admin/v1/materialization-jobs                {data: [job]}
 *   GET    /admin/v1/materialization-jobs/{id}           job (state, progress: blocks done/total, blocks/s, ETA, current chunk; lastError)
 *   POST   /admin/v1/materialization-jobs/{id}/cancel    job (a queued job is cancelled at once; a running one after its chunk in flight)
 *   DELETE /admin/v1/materialization-jobs/{id}           204; only a terminal job (409 otherwise): the retry boundary
 *   POST   /admin/v1/backfill-subscriptions              {processor, fromBlock, toBlock, mode: "fill_missing" | "recompute", idempotencyKey, source?,
 *                                                         consumer: {id, role?, leaseTtlSeconds?, credential?}}: 201 the subscription with its consumer
 *                                                        (and the generated credential, once, when the body had none); 200 same key, body and credential
 *   GET    /admin/v1/backfill-subscriptions[/{id}]       list / one (state, progress: blocks done/total, published through, current chunk; lastError)
 *   POST   /admin/v1/backfill-subscriptions/{id}/cancel  the subscription;  DELETE …/{id}: 204, only a terminal one (with its consumer and stream)
 *   POST   /admin/v1/processors/{processor}/rebuild      {idempotencyKey, source?}: 201 a rebuild (spec §9.5) and its replacement instance; 200 the same
 *                                                        rebuild for the same key and body; 409 same key, other body, or a rebuild of the processor under way
 *   GET    /admin/v1/processors/{processor}/rebuilds[/{id}]  list / one (state, instance, progress: blocks done/total, comparison; lastError)
 *   POST   /admin/v1/processors/{processor}/rebuilds/{id}/promote   {acceptDifferences?} (body optional): the replacement serves, consumers move
 *   POST   /admin/v1/processors/{processor}/rebuilds/{id}/rollback  (no body): the previous instance serves again, consumers move back
 *   POST   /admin/v1/processors/{processor}/rebuilds/{id}/cancel    (no body): the rebuild is `cancelled` and its replacement's lane stopped;
 *                                                        the same again for a cancelled one; 409 while its replacement serves (or is a rollback target)
 *   DELETE /admin/v1/processors/{processor}/rebuilds/{id}           200 what was freed (tables dropped, consumers, job); only a cancelled one (409 otherwise)
 *   POST   /admin/v1/sources/{source}/probe              what the history source can serve, measured
 *
 * Bodies are validated here; everything else is the `history` lane's (asked over its mailbox), so a slow or busy
 * history lane never touches the JSON-RPC listeners.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { withBlockRange } from './block-range.js';
import { CONSUMER_ID, CONSUMER_ROLES } from '../../store/consumers.js';
import { SUBSCRIPTION_ID } from '../../store/backfill-subscriptions.js';
import { MAX_LEASE_TTL_SECONDS } from '../aggregate/consumers/consumer-body.js';
import { CodedError } from '../../runtime/errors.js';
import { HttpError } from '../errors.js';
import { bodyWith, type Request } from '../http.js';
import type { Route } from '../routes.js';
import type { HistoryAdminRequest } from './history-requests.js';

/** Asks the history lane; a lane that does not answer is 503 `not_ready`. */
export type HistoryAsk = (message: HistoryAdminRequest, timeoutMs?: number) => Promise<unknown>;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,63}$/;
const createBody = withBlockRange({
  processor: z.string().regex(NAME, 'expected a processor id'),
  mode: z.literal('fill_missing', 'expected "fill_missing"'),
  idempotencyKey: z.string().min(1).max(200),
  source: z.string().regex(NAME, 'expected a history source id').optional(),
});

/** A backfill subscription: the job's fields, the two modes, and the consumer it creates (spec §2.5 fields). */
const subscriptionBody = withBlockRange({
  processor: z.string().regex(NAME, 'expected a processor id'),
  mode: z.enum(['fill_missing', 'recompute'], 'expected "fill_missing" or "recompute"'),
  idempotencyKey: z.string().min(1).max(200),
  source: z.string().regex(NAME, 'expected a history source id').optional(),
  consumer: z.strictObject({
    id: z.string().regex(CONSUMER_ID, 'expected 1-128 characters from A-Z a-z 0-9 . _ ~ - starting with a letter or digit'),
    role: z.enum(CONSUMER_ROLES).default('required'),
    leaseTtlSeconds: z.number().int().min(1).max(MAX_LEASE_TTL_SECONDS).default(300),
    credential: z.string().min(16, 'expected a secret of at least 16 characters').max(1024).optional(),
  }),
});

function parseCreate(request: Request): z.infer<typeof createBody> {
  return bodyWith(createBody, request);
}

/** An operator's job (`mj-…`) or a processor instance's cold backfill (`cb-<instance>`, actors/history/cold-backfill.ts). */
const JOB_ID = /^(?:mj-[0-9a-f]{12}-[0-9a-f]{8}|cb-[A-Za-z0-9][A-Za-z0-9._~@:+-]{0,127})$/;

function jobId(request: Request): string {
  const id = request.params[0] ?? '';
  if (!JOB_ID.test(id)) throw new HttpError('not_found', `no materialization job '${id.slice(0, 80)}'`, { job: id.slice(0, 80) });
  return id;
}

function subscriptionId(request: Request): string {
  const id = request.params[0] ?? '';
  if (!SUBSCRIPTION_ID.test(id)) throw new HttpError('not_found', `no backfill subscription '${id.slice(0, 80)}'`, { subscription: id.slice(0, 80) });
  return id;
}

export function adminRoutes(ask: HistoryAsk): Route[] {
  const call = async (message: HistoryAdminRequest, timeoutMs = 10_000): Promise<unknown> => {
    try {
      return await ask(message, timeoutMs);
    } catch (error) {
      if (error instanceof CodedError) throw error;
      throw new HttpError('not_ready', `the history lane did not answer: ${(error as Error).message}`);
    }
  };
  const base = '/admin/v1/materialization-jobs';
  return [
    {
      method: 'post', pattern: base, open: false,
      handler: async (request) => {
        const body = parseCreate(request);
        const { created, job } = await call({ type: 'job.create', ...body }) as { created: boolean; job: { id: string } };
        return { status: created ? 201 : 200, body: job, headers: { location: `${base}/${job.id}` } };
      },
    },
    { method: 'get', pattern: base, open: false, handler: async () => ({ body: await call({ type: 'job.list' }) }) },
    { method: 'get', pattern: `${base}/:id`, open: false, handler: async (request) => ({ body: await call({ type: 'job.get', id: jobId(request) }) }) },
    { method: 'post', pattern: `${base}/:id/cancel`, open: false, handler: async (request) => ({ body: await call({ type: 'job.cancel', id: jobId(request) }) }) },
    {
      method: 'delete', pattern: `${base}/:id`, open: false,
      handler: async (request) => {
        await call({ type: 'job.delete', id: jobId(request) });
        return { status: 204 };
      },
    },
    ...subscriptionRoutes(call),
    ...rebuildRoutes(call),
    {
      method: 'post', pattern: '/admin/v1/sources/:source/probe', open: false,
      handler: async (request) => {
        const source = request.params[0] ?? '';
        if (!NAME.test(source)) throw new HttpError('not_found', `no history source '${source.slice(0, 80)}'`, { source: source.slice(0, 80) });
        // A probe makes several upstream calls, each with the source's own timeout and retries.
        return { body: await call({ type: 'probe', source }, 120_000) };
      },
    },
  ];
}

const rebuildBody = z.strictObject({
  idempotencyKey: z.string().min(1).max(200),
  source: z.string().regex(NAME, 'expected a history source id').optional(),
});

const promoteBody = z.strictObject({ acceptDifferences: z.boolean().default(false) });

const REBUILD_ID = /^rb-[A-Za-z0-9][A-Za-z0-9._~-]{0,63}-[0-9]{1,9}$/;

function processorParam(request: Request): string {
  const processor = request.params[0] ?? '';
  if (!NAME.test(processor)) throw new HttpError('not_found', `no processor '${processor.slice(0, 80)}'`, { processor: processor.slice(0, 80) });
  return processor;
}

function rebuildParams(request: Request): { processor: string; id: string } {
  const processor = processorParam(request);
  const id = request.params[1] ?? '';
  if (!REBUILD_ID.test(id)) throw new HttpError('not_found', `no rebuild '${id.slice(0, 80)}' of processor '${processor}'`, { processor, rebuild: id.slice(0, 80) });
  return { processor, id };
}

/** Processor rebuilds (spec §9.5): the history lane's `rebuild.*` messages (actors/history/rebuilds.ts). */
function rebuildRoutes(call: HistoryAsk): Route[] {
  const base = '/admin/v1/processors/:processor/rebuilds';
  return [
    {
      method: 'post', pattern: '/admin/v1/processors/:processor/rebuild', open: false,
      handler: async (request) => {
        const processor = processorParam(request);
        let body: z.infer<typeof rebuildBody>;
        try {
          body = bodyWith(rebuildBody, request);
        } catch (error) {
          // An unknown processor is 404 whatever the body (the history lane knows the processors).
          await call({ type: 'rebuild.list', processor });
          throw error;
        }
        const { created, rebuild } = await call({ type: 'rebuild.create', processor, ...body }, 30_000) as { created: boolean; rebuild: { id: string } };
        return { status: created ? 201 : 200, body: rebuild, headers: { location: `/admin/v1/processors/${processor}/rebuilds/${rebuild.id}` } };
      },
    },
    { method: 'get', pattern: base, open: false, handler: async (request) => ({ body: await call({ type: 'rebuild.list', processor: processorParam(request) }) }) },
    { method: 'get', pattern: `${base}/:id`, open: false, handler: async (request) => ({ body: await call({ type: 'rebuild.get', ...rebuildParams(request) }) }) },
    {
      method: 'post', pattern: `${base}/:id/promote`, open: false,
      handler: async (request) => {
        const params = rebuildParams(request);
        const { acceptDifferences } = request.body.length === 0 ? { acceptDifferences: false } : bodyWith(promoteBody, request);
        return { body: await call({ type: 'rebuild.promote', ...params, acceptDifferences }, 60_000) };
      },
    },
    { method: 'post', pattern: `${base}/:id/rollback`, open: false, handler: async (request) => ({ body: await call({ type: 'rebuild.rollback', ...rebuildParams(request) }, 60_000) }) },
    // Stopping the replacement's lane waits for its open commit (at most its shutdown budget).
    { method: 'post', pattern: `${base}/:id/cancel`, open: false, handler: async (request) => ({ body: await call({ type: 'rebuild.cancel', ...rebuildParams(request) }, 150_000) }) },
    { method: 'delete', pattern: `${base}/:id`, open: false, handler: async (request) => ({ body: await call({ type: 'rebuild.delete', ...rebuildParams(request) }, 150_000) }) },
  ];
}

/** /admin/v1/backfill-subscriptions (spec §4.6): the history lane's `subscription.*` messages (actors/history/subscriptions.ts). */
function subscriptionRoutes(call: HistoryAsk): Route[] {
  const base = '/admin/v1/backfill-subscriptions';
  return [
    {
      method: 'post', pattern: base, open: false,
      handler: async (request) => {
        const { consumer: { credential: given, ...consumer }, ...body } = bodyWith(subscriptionBody, request);
        // Without a credential in the body the node makes one; it is in this 201 answer only (hashed at rest).
        const credential = given ?? randomBytes(32).toString('base64url');
        const { created, subscription } = await call({ type: 'subscription.create', ...body, consumer, credential }, 30_000) as {
          created: boolean; subscription: { id: string; consumer: Record<string, unknown> };
        };
        const answer = created && given === undefined ? { ...subscription, consumer: { ...subscription.consumer, credential } } : subscription;
        return { status: created ? 201 : 200, body: answer, headers: { location: `${base}/${subscription.id}` } };
      },
    },
    { method: 'get', pattern: base, open: false, handler: async () => ({ body: await call({ type: 'subscription.list' }) }) },
    { method: 'get', pattern: `${base}/:id`, open: false, handler: async (request) => ({ body: await call({ type: 'subscription.get', id: subscriptionId(request) }) }) },
    { method: 'post', pattern: `${base}/:id/cancel`, open: false, handler: async (request) => ({ body: await call({ type: 'subscription.cancel', id: subscriptionId(request) }) }) },
    {
      method: 'delete', pattern: `${base}/:id`, open: false,
      handler: async (request) => {
        await call({ type: 'subscription.delete', id: subscriptionId(request) });
        return { status: 204 };
      },
    },
  ];
}
