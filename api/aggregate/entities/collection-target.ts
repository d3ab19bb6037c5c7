/**
 * What a generic entity route reads: the processor (404 when unknown), its kind's collection (404
 * when the kind has none of that name), its tables (null before its lane created them), the
 * retained window and coverage — read in the caller's synchronous turn, so in one LMDB snapshot.
 */
import type { CollectionDescription } from '../../../store/collection.js';
import type { ProcessorTables } from '../../../store/store.js';
import { HttpError } from '../../errors.js';
import type { AggregateContext } from '../aggregate-context.js';
import type { ConfiguredProcessor } from '../configured-processors.js';
import { coveredRanges, processorTables, progressOf } from '../processor-reader.js';
import type { RetainedState } from './entity-query.js';

export interface CollectionTarget {
  readonly processor: ConfiguredProcessor;
  readonly collection: CollectionDescription;
  readonly tables: ProcessorTables | null;
  readonly retained: RetainedState;
}

/** The collections of a processor's kind (none when the context serves no surface for it). */
export function collectionsOf(context: AggregateContext, processor: ConfiguredProcessor): readonly CollectionDescription[] {
  return context.kinds?.get(processor.kind)?.collections ?? [];
}

export function collectionTarget(context: AggregateContext, processorId: string, collectionName: string): CollectionTarget {
  const processor = context.processors.byId(processorId);
  const collection = collectionsOf(context, processor).find((c) => c.name === collectionName);
  if (!collection) {
    throw new HttpError('not_found', `processor '${processor.id}' has no collection '${collectionName}'`, {
      processor: processor.id, collections: collectionsOf(context, processor).map((c) => c.name),
    });
  }
  const tables = processorTables(context.store, processor.instance);
  const ranges = coveredRanges(tables);
  return { processor, collection, tables, retained: { ranges, windowStart: progressOf(processor, tables).configuredStartBlock } };
}
