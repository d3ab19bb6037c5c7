/**
 * The node's consumer backend (consumer-routes.ts ConsumerBackend): records read straight from LMDB, every change to
 * one asked of the `outbox` lane (its only writer), change bytes copied from the log into the page.
 */
import { listConsumers, readConsumer } from '../../../store/consumers.js';
import { listBindings, subscriptionBinding } from '../../../store/backfill-subscriptions.js';
import type { AggregateContext } from '../aggregate-context.js';
import { processorTables, readCoverage } from '../processor-reader.js';
import type { ConsumerBackend, ConsumerWrites } from './consumer-routes.js';
import { deliveredPage } from './consumer-page.js';

export function nodeConsumers(context: AggregateContext, writes: ConsumerWrites): ConsumerBackend {
  const { store, chainId } = context;
  return {
    ...writes,
    list: (processor) => {
      const records = listConsumers(store.consumers, processor.instance);
      for (const binding of listBindings(store, processor.instance)) {
        const record = readConsumer(store.consumers, binding.stream, binding.consumer);
        if (record) records.push(record);
      }
      return records.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },
    // A backfill subscription's consumer lives in its stream's instance (store/backfill-subscriptions.ts); any other in the processor's.
    find: (processor, id) => readConsumer(store.consumers, subscriptionBinding(store, processor.instance, id)?.stream ?? processor.instance, id),
    subscriptionOf: (processor, id) => subscriptionBinding(store, processor.instance, id),
    owner: (_processor, instance) => ({ epoch: store.epoch, chainId, instance }),
    page: (_processor, record, after, through, closing) => {
      const tables = processorTables(store, record.instance);
      return deliveredPage(store, tables ? { changes: tables.changes, epoch: store.epoch, chainId, instance: record.instance } : null, after, through, closing);
    },
    coverage: (processor) => readCoverage(store, chainId, processor),
  };
}
