/**
 * What the API knows about each processor kind: its descriptor (version, change schema label,
 * delivery ordering), the query extensions it installs and its schema document. One entry per
 * built-in kind; the processor's own package is the source of every value.
 */
import { BLOBS_PROCESSOR, BLOBS_SCHEMA } from '../../actors/processors/blobs/schema.js';

export type ProcessorKind = 'blobs';

export interface ProcessorKindInfo {
  readonly kind: ProcessorKind;
  readonly version: string;
  readonly changeSchema: string;
  readonly genericApi: string;
  readonly deliveryOrdering: string;
  /** Names of the typed query extensions (`/v1/processors/{id}/query/<name>`, alias `/v1/q/<name>`). */
  readonly queryExtensions: readonly string[];
  readonly schema: unknown;
}

export const PROCESSOR_KINDS: Readonly<Record<ProcessorKind, ProcessorKindInfo>> = {
  blobs: {
    kind: 'blobs',
    version: BLOBS_PROCESSOR.version,
    changeSchema: BLOBS_PROCESSOR.changeSchema,
    genericApi: BLOBS_PROCESSOR.genericApi,
    deliveryOrdering: BLOBS_PROCESSOR.deliveryOrdering,
    queryExtensions: ['blobs'],
    schema: BLOBS_SCHEMA,
  },
};
