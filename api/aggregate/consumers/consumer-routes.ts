/**
 * Durable consumers (spec §2.5, §4.3): create, list, get, delete (API bearer only), and the
 * consumer-scoped calls — lease renewal, change batches after the delivered watermark, and
 * acknowledgements — which also need `x-node-consumer-credential` (spec §5.3: when an API bearer
 * is configured, a request that passed it may omit the consumer credential; a credential that is
 * sent must be that consumer's, else 403).
 *
 * Records and change bytes come from a ConsumerBackend: the node's (node-consumers.ts: LMDB, every change
 * asked of the `outbox` lane, its only writer) or a relay's (actors/relay/relay-consumers.ts). Redelivery: `POST …/lease {"redeliver": true}`
 * moves the delivered watermark back to the acknowledged one, so a client that restarted (or lost
 * a response) receives again every change it has not acknowledged — the at-least-once window.
 *
 * A backfill subscription's consumer (admin/v1/backfill-subscriptions) is served by these same routes under its
 * processor: its record and cursors belong to the subscription's stream (store/backfill-subscriptions.ts), so its
 * `changes`/`ack` read and acknowledge that stream only; it is deleted with its subscription, not here.
 */
import { consumerKey, type ConsumerRecord } from '../../../store/consumers.js';
import type { ProcessorCoverage } from '../../../store/coverage.js';
import { decodeCursor } from '../../../store/cursor.js';
import { hashCredential } from '../../../store/credential-hash.js';
import { HttpError } from '../../errors.js';
import type { Request } from '../../http.js';
import type { Route } from '../../routes.js';
import type { BearerCheck } from '../../auth/bearer.js';
import type { ConsumerCreation, ConsumerRef, Delivery } from '../../../store/consumer-commands.js';
import type { CursorOwner } from '../change-position.js';
import { requireDelivery, type ConfiguredProcessor, type ProcessorRegistry } from '../configured-processors.js';
import { jsonBytesReply } from '../json-body.js';
import { pageLimit, type PageLimits } from '../query-params.js';
import { parseAckBody, parseCreateBody, parseLeaseBody } from './consumer-body.js';
import { CredentialVerifier } from './consumer-credentials.js';
import type { ConsumerPage } from './consumer-page.js';
import { consumerView } from './consumer-view.js';

/** The consumer writes, asked of the outbox lane (actors/outbox/client.ts); a CodedError answers with its code. */
export interface ConsumerWrites {
  create(creation: ConsumerCreation): Promise<ConsumerRecord>;
  /** False when there was no such consumer. */
  remove(ref: ConsumerRef): Promise<boolean>;
  lease(ref: ConsumerRef, redeliver: boolean): Promise<ConsumerRecord>;
  deliver(ref: ConsumerRef, limit: number): Promise<Delivery>;
  acknowledge(ref: ConsumerRef, sequence: string, cursor: string): Promise<ConsumerRecord>;
}

/**
 * Where the consumer routes keep records and read change bytes: the node's store and outbox lane
 * (node-consumers.ts), or a relay's key-value bucket and copy of the stream (actors/relay/relay-consumers.ts).
 */
export interface ConsumerBackend extends ConsumerWrites {
  /** Every consumer under `processor`, in id order (a node also lists its backfill subscriptions' consumers). */
  list(processor: ConfiguredProcessor): Promise<ConsumerRecord[]> | ConsumerRecord[];
  /** The consumer `id` under `processor` (in a subscription's stream when it is a subscription's), or undefined. */
  find(processor: ConfiguredProcessor, id: string): Promise<ConsumerRecord | undefined> | ConsumerRecord | undefined;
  /** The backfill subscription consumer `id` under `processor` belongs to (a node's; a relay has none). */
  subscriptionOf(processor: ConfiguredProcessor, id: string): { readonly subscription: string; readonly stream: string } | undefined;
  /** What a cursor of `instance` must name. */
  owner(processor: ConfiguredProcessor, instance: string): CursorOwner;
  /** `{"data":[` the envelopes of (after, through] of the record's instance `]` and then `closing(lastCursor)`. */
  page(processor: ConfiguredProcessor, record: ConsumerRecord, after: bigint, through: bigint, closing: (lastCursor: string | null) => string): Promise<ConsumerPage> | ConsumerPage;
  coverage(processor: ConfiguredProcessor): ProcessorCoverage;
}

/** What the consumer routes need besides the backend: the node's aggregate context, or a relay's. */
export interface ConsumerContext {
  readonly processors: Pick<ProcessorRegistry, 'byId'>;
  readonly limits: PageLimits;
  /** The API bearer check, or null/absent when no token is configured. */
  readonly bearer?: BearerCheck | null;
}

const BASE = '/v1/processors/:processor/consumers';
const CREDENTIAL_HEADER = 'x-node-consumer-credential';

export function consumerRoutes(context: ConsumerContext, backend: ConsumerBackend): Route[] {
  const writes = backend;
  const credentials = new CredentialVerifier();
  const processorOf = (request: Request): ConfiguredProcessor => {
    const processor = context.processors.byId(request.params[0] ?? '');
    requireDelivery(processor);
    return processor;
  };
  const recordOf = async (processor: ConfiguredProcessor, id: string): Promise<ConsumerRecord> => {
    const record = await backend.find(processor, id);
    if (!record) throw new HttpError('not_found', `no consumer '${id}' on processor '${processor.id}'`, { consumer: id });
    return record;
  };
  /** The consumer named in the path, after its credential check; `required` false lets administrative calls omit the header. */
  const authorize = async (request: Request, required: boolean): Promise<{ processor: ConfiguredProcessor; record: ConsumerRecord }> => {
    const processor = processorOf(request);
    const record = await recordOf(processor, request.params[1] ?? '');
    const presented = request.headers[CREDENTIAL_HEADER];
    if (presented === undefined) {
      if (!required || context.bearer) return { processor, record };
      throw new HttpError('unauthorized', `this call needs the consumer's credential in the ${CREDENTIAL_HEADER} header`);
    }
    if (!(await credentials.verify(consumerKey(record.instance, record.id), presented, record.credential))) {
      throw new HttpError('forbidden', `the ${CREDENTIAL_HEADER} credential is not the credential of consumer '${record.id}'`, { consumer: record.id });
    }
    return { processor, record };
  };

  return [
    {
      method: 'get', pattern: BASE, open: false,
      handler: async (request) => {
        const processor = processorOf(request);
        const records = await backend.list(processor);
        const now = Date.now();
        return { body: { data: records.map((record) => consumerView(record, now)) } };
      },
    },
    {
      method: 'post', pattern: BASE, open: false,
      handler: async (request) => {
        const processor = processorOf(request);
        const body = parseCreateBody(request);
        const binding = backend.subscriptionOf(processor, body.id);
        if (binding) throw new HttpError('conflict', `consumer '${body.id}' already exists on this processor (backfill subscription ${binding.subscription}'s)`, { consumer: body.id, subscription: binding.subscription });
        const start: ConsumerCreation['start'] = body.start.position === 'cursor'
          ? { position: 'cursor', sequence: decodeCursor(body.start.cursor!, backend.owner(processor, processor.instance)).sequence.toString(), cursor: body.start.cursor! }
          : { position: body.start.position };
        const credential = await hashCredential(body.credential);
        const record = await writes.create({
          instance: processor.instance, processor: processor.id, id: body.id, role: body.role, leaseTtlSeconds: body.leaseTtlSeconds, credential, start,
        });
        credentials.remember(consumerKey(processor.instance, record.id), body.credential, record.credential);
        return { status: 201, body: consumerView(record, Date.now()), headers: { location: `/v1/processors/${encodeURIComponent(processor.id)}/consumers/${encodeURIComponent(record.id)}` } };
      },
    },
    {
      method: 'get', pattern: `${BASE}/:consumer`, open: false,
      handler: async (request) => consumerReply((await authorize(request, false)).record),
    },
    {
      method: 'delete', pattern: `${BASE}/:consumer`, open: false,
      handler: async (request) => {
        const { processor, record } = await authorize(request, false);
        if (record.instance !== processor.instance) {
          const binding = backend.subscriptionOf(processor, record.id);
          throw new HttpError('conflict', `consumer '${record.id}' belongs to backfill subscription ${binding?.subscription ?? '(unknown)'}: it goes with the subscription (DELETE /admin/v1/backfill-subscriptions/{id} once it is terminal)`, { consumer: record.id, subscription: binding?.subscription ?? null });
        }
        const deleted = await writes.remove({ instance: processor.instance, id: record.id });
        credentials.forget(consumerKey(processor.instance, record.id));
        if (!deleted) throw new HttpError('not_found', `no consumer '${record.id}' on processor '${processor.id}'`, { consumer: record.id });
        return { status: 204 };
      },
    },
    {
      method: 'post', pattern: `${BASE}/:consumer/lease`, open: false,
      handler: async (request) => {
        const { record } = await authorize(request, true);
        const { redeliver } = parseLeaseBody(request);
        return consumerReply(await writes.lease({ instance: record.instance, id: record.id }, redeliver));
      },
    },
    {
      method: 'get', pattern: `${BASE}/:consumer/changes`, open: false,
      handler: async (request) => {
        const limit = pageLimit(request.query, context.limits);
        const { processor, record } = await authorize(request, true);
        const delivery = await writes.deliver({ instance: record.instance, id: record.id }, limit);
        const after = BigInt(delivery.after);
        const through = BigInt(delivery.through);
        const page = await backend.page(processor, delivery.record, after, through, (lastCursor) => {
          const nextCursor = through - after === BigInt(limit) ? lastCursor : null;
          return `],"nextCursor":${JSON.stringify(nextCursor)},"coverage":${JSON.stringify(backend.coverage(processor))},"consumer":${JSON.stringify(consumerView(delivery.record, Date.now()))}}`;
        });
        return { ...jsonBytesReply(page.body), written: page.release };
      },
    },
    {
      method: 'post', pattern: `${BASE}/:consumer/ack`, open: false,
      handler: async (request) => {
        const { processor, record } = await authorize(request, true);
        const { cursor } = parseAckBody(request);
        const { sequence } = decodeCursor(cursor, backend.owner(processor, record.instance));
        return consumerReply(await writes.acknowledge({ instance: record.instance, id: record.id }, sequence.toString(), cursor));
      },
    },
  ];
}

function consumerReply(record: ConsumerRecord) {
  return { body: consumerView(record, Date.now()) };
}
