/**
 * Durable consumers (spec §2.5, §4.3): create, list, get, delete (API bearer only), and the
 * consumer-scoped calls — lease renewal, change batches after the delivered watermark, and
 * acknowledgements — which also need `x-node-consumer-credential` (spec §5.3: when an API bearer
 * is configured, a request that passed it may omit the consumer credential; a credential that is
 * sent must be that consumer's, else 403).
 *
 * Records and change bytes are read here from LMDB; every change to a record is asked of the
 * `outbox` lane, its only writer (actors/outbox). Redelivery: `POST …/lease {"redeliver": true}`
 * moves the delivered watermark back to the acknowledged one, so a client that restarted (or lost
 * a response) receives again every change it has not acknowledged — the at-least-once window.
 *
 * A backfill subscription's consumer (admin/v1/backfill-subscriptions) is served by these same routes under its
 * processor: its record and cursors belong to the subscription's stream (store/backfill-subscriptions.ts), so its
 * `changes`/`ack` read and acknowledge that stream only; it is deleted with its subscription, not here.
 */
import { consumerKey, listConsumers, readConsumer, type ConsumerRecord } from '../../../store/consumers.js';
import { decodeCursor } from '../../../store/cursor.js';
import { listBindings, subscriptionBinding } from '../../../store/backfill-subscriptions.js';
import { hashCredential } from '../../../store/credential-hash.js';
import { HttpError } from '../../errors.js';
import type { Request } from '../../http.js';
import type { Route } from '../../routes.js';
import type { ConsumerCreation, ConsumerRef, Delivery } from '../../../store/consumer-commands.js';
import type { AggregateContext } from '../aggregate-context.js';
import { requireDelivery, type ConfiguredProcessor } from '../configured-processors.js';
import { jsonBytesReply } from '../json-body.js';
import { processorTables, readCoverage } from '../processor-reader.js';
import { pageLimit } from '../query-params.js';
import { parseAckBody, parseCreateBody, parseLeaseBody } from './consumer-body.js';
import { CredentialVerifier } from './consumer-credentials.js';
import { deliveredPage } from './consumer-page.js';
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

const BASE = '/v1/processors/:processor/consumers';
const CREDENTIAL_HEADER = 'x-node-consumer-credential';

export function consumerRoutes(context: AggregateContext, writes: ConsumerWrites): Route[] {
  const credentials = new CredentialVerifier();
  const processorOf = (request: Request): ConfiguredProcessor => {
    const processor = context.processors.byId(request.params[0] ?? '');
    requireDelivery(processor);
    return processor;
  };
  /** A backfill subscription's consumer lives in its stream's instance (store/backfill-subscriptions.ts); any other in the processor's. */
  const instanceOf = (processor: ConfiguredProcessor, id: string): string => subscriptionBinding(context.store, processor.instance, id)?.stream ?? processor.instance;
  const recordOf = (processor: ConfiguredProcessor, id: string): ConsumerRecord => {
    const record = readConsumer(context.store.consumers, instanceOf(processor, id), id);
    if (!record) throw new HttpError('not_found', `no consumer '${id}' on processor '${processor.id}'`, { consumer: id });
    return record;
  };
  /** The consumer named in the path, after its credential check; `required` false lets administrative calls omit the header. */
  const authorize = async (request: Request, required: boolean): Promise<{ processor: ConfiguredProcessor; record: ConsumerRecord }> => {
    const processor = processorOf(request);
    const record = recordOf(processor, request.params[1] ?? '');
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
  const owner = (instance: string) => ({ epoch: context.store.epoch, chainId: context.chainId, instance });

  return [
    {
      method: 'get', pattern: BASE, open: false,
      handler: (request) => {
        const processor = processorOf(request);
        const now = Date.now();
        const records = listConsumers(context.store.consumers, processor.instance);
        for (const binding of listBindings(context.store, processor.instance)) {
          const record = readConsumer(context.store.consumers, binding.stream, binding.consumer);
          if (record) records.push(record);
        }
        records.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        return { body: { data: records.map((record) => consumerView(record, now)) } };
      },
    },
    {
      method: 'post', pattern: BASE, open: false,
      handler: async (request) => {
        const processor = processorOf(request);
        const body = parseCreateBody(request);
        const binding = subscriptionBinding(context.store, processor.instance, body.id);
        if (binding) throw new HttpError('conflict', `consumer '${body.id}' already exists on this processor (backfill subscription ${binding.subscription}'s)`, { consumer: body.id, subscription: binding.subscription });
        const start: ConsumerCreation['start'] = body.start.position === 'cursor'
          ? { position: 'cursor', sequence: decodeCursor(body.start.cursor!, owner(processor.instance)).sequence.toString(), cursor: body.start.cursor! }
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
          const binding = subscriptionBinding(context.store, processor.instance, record.id);
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
        const tables = processorTables(context.store, record.instance);
        const page = deliveredPage(context.store, tables ? { changes: tables.changes, epoch: context.store.epoch, chainId: context.chainId, instance: record.instance } : null, after, through, (lastCursor) => {
          const nextCursor = through - after === BigInt(limit) ? lastCursor : null;
          const coverage = readCoverage(context.store, context.chainId, processor);
          return `],"nextCursor":${JSON.stringify(nextCursor)},"coverage":${JSON.stringify(coverage)},"consumer":${JSON.stringify(consumerView(delivery.record, Date.now()))}}`;
        });
        return { ...jsonBytesReply(page.body), written: page.release };
      },
    },
    {
      method: 'post', pattern: `${BASE}/:consumer/ack`, open: false,
      handler: async (request) => {
        const { record } = await authorize(request, true);
        const { cursor } = parseAckBody(request);
        const { sequence } = decodeCursor(cursor, owner(record.instance));
        return consumerReply(await writes.acknowledge({ instance: record.instance, id: record.id }, sequence.toString(), cursor));
      },
    },
  ];
}

function consumerReply(record: ConsumerRecord) {
  return { body: consumerView(record, Date.now()) };
}
